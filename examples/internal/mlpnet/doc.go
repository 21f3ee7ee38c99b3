// Package mlpnet holds the MLP classifier the MNIST example programs
// (examples/gelu-vs-relu, examples/dying-neurons,
// examples/gradient-variance) train and what they measure of it before and
// during training: Classifier builds it with its inputs and loss as a
// train.Model, ProbeSteps calls a probe every so many steps, InitRMS and
// FirstBatch measure the untrained networks.
//
//	model, mlp, err := mlpnet.Classifier(tensor.Float32, seed, batch, nn.MLPConfig{In: 784, Hidden: []int{128, 128}, Out: 10})
//	onStep, err := mlpnet.ProbeSteps(25, steps, func(step int, loss float64) error { … })
package mlpnet
