// Package mlpnet holds the MLP classifier the MNIST example programs
// (examples/gelu-vs-relu, examples/dying-neurons,
// examples/gradient-variance) train and what they measure of it before and
// during training: Classifier builds it with its inputs and loss as a
// train.Model, ProbeSteps calls a probe every so many steps, InitRMS and
// FirstBatch measure the untrained networks. The classifier on two
// spirals, probed every 100 steps (Example):
//
//	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 200, Noise: 0.05, Seed: 1})
//	l, _ := datasets.NewLoader(data, datasets.LoaderConfig{BatchSize: 40, Shuffle: true, Seed: 1, Dtype: tensor.Float64})
//	model, mlp, err := mlpnet.Classifier(tensor.Float64, 1, 40, nn.MLPConfig{In: 2, Hidden: []int{32, 32}, Out: 2})
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	onStep, _ := mlpnet.ProbeSteps(100, 300, func(step int, loss float64) error {
//		fmt.Printf("step %d: mean loss %.2f; %d hidden layers to probe\n", step, loss, len(mlp.Pre))
//		return nil
//	})
//	t, _ := train.New(model, &optim.SGD{LearningRate: 0.1, Momentum: 0.9}, l, nil, train.Config{MaxSteps: 300, Quiet: true, OnStep: onStep})
//	if _, err := t.Run(context.Background()); err != nil {
//		fmt.Println(err)
//	}
package mlpnet
