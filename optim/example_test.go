package optim_test

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A training loop: the machine computes gradients, the optimizer applies
// them to the graph's parameters in place. The loss Σ(w − 3)² is smallest
// at w = 3.
func Example() {
	g, _ := graph.New(tensor.Float64, 1)
	w, _ := g.Param("w", graph.Zeros(), 2)
	three := G.NewConstant(3.0)
	diff, _ := G.Sub(w, three)
	sq, _ := G.Square(diff)
	loss, _ := G.Sum(sq)
	m, _ := g.Compile(loss)

	opt := optim.NewAdam(0.1)
	sched, _ := optim.Cosine(0.1, 300, 0)
	for step := 0; step < 300; step++ {
		if err := m.Run(); err != nil {
			fmt.Println(err)
			return
		}
		grads, _ := m.Grads()
		opt.SetLR(sched.LR(step))
		if err := opt.Step(g.ParamTensors(), grads); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("w = %.3f\n", g.ParamTensors()[0].Value.Float64s())
	// Output: w = [3.000 3.000]
}

// Plain SGD on f(w) = ½w², whose gradient is w: with lr 0.5 every step
// halves w.
func ExampleSGD() {
	w := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{8, -4}))
	params := []graph.NamedTensor{{Name: "w", Value: w}}
	opt := optim.NewSGD(0.5)
	for i := 0; i < 3; i++ {
		grad := w.Clone().(*tensor.Dense) // ∇½w² = w
		if err := opt.Step(params, []*tensor.Dense{grad}); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(w.Float64s())
	}
	// Output:
	// [4 -2]
	// [2 -1]
	// [1 -0.5]
}

// With momentum, the buffer is readable for measurements. With dampening
// equal to the momentum it is an exponential moving average of the
// gradients, which PyTorch starts at the first gradient.
func ExampleSGD_MomentumBuffers() {
	w := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{0}))
	params := []graph.NamedTensor{{Name: "w", Value: w}}
	opt := &optim.SGD{LearningRate: 0, Momentum: 0.5, Dampening: 0.5}
	for _, g := range []float64{4, 0, 2} {
		grad := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{g}))
		_ = opt.Step(params, []*tensor.Dense{grad})
		fmt.Println(opt.MomentumBuffers()[0].Float64s())
	}
	// Output:
	// [4]
	// [2]
	// [2]
}

// A constant gradient moves every Adam step by about the learning rate,
// whatever its size: lr·g/(|g| + eps).
func ExampleAdam() {
	w := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 1}))
	grad := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{2, -0.001}))
	params := []graph.NamedTensor{{Name: "w", Value: w}}
	opt := optim.NewAdam(0.1)
	for i := 0; i < 3; i++ {
		_ = opt.Step(params, []*tensor.Dense{grad})
		fmt.Printf("%.4f\n", w.Float32s())
	}
	// Output:
	// [0.9000 1.1000]
	// [0.8000 1.2000]
	// [0.7000 1.3000]
}

// Linear warmup over 4 steps on top of a cosine decay over 10.
func ExampleWarmup() {
	cos, _ := optim.Cosine(0.1, 10, 0)
	s, _ := optim.Warmup(cos, 4)
	for _, step := range []int{0, 1, 2, 3, 5, 10} {
		fmt.Printf("step %2d: %.5f\n", step, s.LR(step))
	}
	// Output:
	// step  0: 0.02500
	// step  1: 0.04878
	// step  2: 0.06784
	// step  3: 0.07939
	// step  5: 0.05000
	// step 10: 0.00000
}

func ExampleClipGradNorm() {
	a := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{3, 4}))
	b := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{0}))
	norm, _ := optim.ClipGradNorm([]*tensor.Dense{a, b}, 1)
	fmt.Printf("norm %.1f, clipped %.4f\n", norm, a.Float64s())
	// Output: norm 5.0, clipped [0.6000 0.8000]
}

// Two SGD groups: the bias learns at twice the weight's rate and without
// weight decay. SetLR moves both rates: by hand, w = 1 − 0.1·(1 + 0.5·1) =
// 0.85 and b = 1 − 0.2·1 = 0.8, then w = 0.85 − 0.05·(1 + 0.5·0.85) =
// 0.77875 and b = 0.8 − 0.1·1 = 0.7.
func ExampleGroup() {
	w := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1}))
	b := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1}))
	params := []graph.NamedTensor{{Name: "w", Value: w}, {Name: "b", Value: b}}
	opt := &optim.SGD{LearningRate: 0.1, WeightDecay: 0.5, Groups: []optim.Group{
		optim.NewGroup([]string{"w"}),
		optim.NewGroup([]string{"b"}, optim.LRScale(2), optim.WeightDecay(0)),
	}}
	for _, lr := range []float64{0.1, 0.05} {
		ones := []*tensor.Dense{
			tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1})),
			tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1})),
		}
		opt.SetLR(lr)
		if err := opt.Step(params, ones); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("lr %.2f: w %.5f, b %.5f\n", lr, w.Float64s()[0], b.Float64s()[0])
	}
	// Output:
	// lr 0.10: w 0.85000, b 0.80000
	// lr 0.05: w 0.77875, b 0.70000
}

// nanoGPT's optimizer step on a linear regression: AdamW with weight decay
// on the weight matrix only and betas (0.9, 0.95), a warmup + cosine
// schedule, and the gradient norm clipped to 1, logged before clipping.
// The body is the package documentation's sketch.
func Example_nanoGPT() {
	g, _ := graph.New(tensor.Float64, 1)
	fc, _ := nn.NewLinear(g, "fc", 3, 2)
	x, _ := g.Input("x", 4, 3)
	y, _ := g.Input("y", 4, 2)
	out, _ := fc.Forward(x)
	loss, _ := nn.MSELoss(out, y)
	m, _ := g.Compile(loss)
	m.Set(x, tensor.New(tensor.WithShape(4, 3), tensor.WithBacking([]float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})))
	m.Set(y, tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float64{1, -1, 2, 0, 0, 1, 3, 0})))

	params := g.ParamTensors()
	opt := optim.NanoGPTAdamW(params, 0.05, 0.1) // AdamW, betas (0.9, 0.95), decay on matrices only
	decay, _ := optim.Cosine(0.05, 400, 0.005)
	sched, _ := optim.Warmup(decay, 20)
	for step := range 400 {
		if err := m.Run(); err != nil { // forward and backward
			fmt.Println(err)
			return
		}
		grads, _ := m.Grads()
		norm, _ := optim.ClipGradNorm(grads, 1.0) // the norm before clipping, for the log
		opt.SetLR(sched.LR(step))
		if err := opt.Step(params, grads); err != nil { // a NaN or ±Inf gradient, named
			fmt.Println(err)
			return
		}
		if step%200 == 0 || step == 399 {
			l, _ := m.Loss()
			fmt.Printf("step %d: loss %.3g, gradient norm %.3g\n", step, l, norm)
		}
	}
	fmt.Println(opt.Groups)
	// Output:
	// step 0: loss 2.49, gradient norm 2.31
	// step 200: loss 5.2e-06, gradient norm 0.00293
	// step 399: loss 1.39e-07, gradient norm 0.000701
	// [{[fc.weight] [weight_decay=0.1]} {[fc.bias] [weight_decay=0]}]
}
