package probe_test

import (
	"fmt"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// Two momentum buffers, an EMA and a heavy ball with β = 0.9, fed the
// gradients of an MLP training on two spirals at a small learning rate
// (the buffers do not move the model). The EMA buffer's variance over the
// gradients' is compared with what independent gradients give in a window
// of 1000 steps after the burn-in, (1 − β)/(1 + β) times a window
// correction: here they agree. The data set is large (4000 points, 200
// batches an epoch) because the batches of one epoch are drawn without
// replacement and are therefore not independent: with 400 points (20
// batches an epoch) the measured ratio falls well below the prediction,
// while a Sampler's batches from the same 400 points agree with it. The
// body is the package documentation's sketch.
func ExampleWatch() {
	g, _ := graph.New(tensor.Float64, 1)
	mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{16}, Out: 2})
	x, _ := g.Input("x", 20, 2)
	y, _ := g.Input("y", 20)
	logits, _ := mlp.Forward(x)
	loss, _ := nn.CrossEntropyLoss(logits, y)
	net, _ := probe.NewNet(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}, nil)
	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 2000, Noise: 0.05, Seed: 1})
	l, _ := datasets.NewLoader(data, datasets.LoaderConfig{BatchSize: 20, Shuffle: true, Seed: 1, Dtype: tensor.Float64})

	w, _ := probe.NewWatch(net.Params, 100, probe.BurnIn(0.9, 1e-4),
		probe.Buffer{Form: probe.EMA, Beta: 0.9}, probe.Buffer{Form: probe.HeavyBall, Beta: 0.9})
	if _, err := net.Run(probe.LoaderStream(l), probe.BurnIn(0.9, 1e-4)+1000, w, optim.NewSGD(1e-3)); err != nil {
		fmt.Println(err)
		return
	}
	s, _ := w.Summary()
	c := s.Buffers[0] // the EMA buffer over all parameters
	fmt.Printf("Var(m)/Var(g) = %.4f ± %.4f, expected %.4f (z = %.1f)\n", c.Ratio, c.RatioSE, c.Expected, c.Z())
	// Output:
	// Var(m)/Var(g) = 0.0530 ± 0.0046, expected 0.0517 (z = 0.3)
}
