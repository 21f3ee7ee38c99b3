package nn_test

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
)

// Distillation: a teacher GPT and a smaller student in one graph, under
// the prefixes "teacher" and "student". The teacher is frozen (its
// parameters are not in WithRespectTo and the optimizer never sees them);
// the student learns to reproduce its logits (Ba & Caruana's logit
// matching: mean squared error) in a loop of our own. Here the teacher is
// a GPT with PyTorch's default init, whose logits are of order 1; a real
// one comes from train.LoadWeights(path, teacher).
func Example_distillation() {
	const T, batch, vocab = 8, 4, 16
	g, _ := graph.New(tensor.Float64, 1)
	teacher, _ := nn.NewGPT(g, "teacher", nn.GPTConfig{BlockSize: T, VocabSize: vocab, Layers: 2, Heads: 2, Dim: 32, PyTorchInit: true})
	student, _ := nn.NewGPT(g, "student", nn.GPTConfig{BlockSize: T, VocabSize: vocab, Layers: 1, Heads: 2, Dim: 16})
	idx, _ := g.Input("idx", batch, T)
	soft, _ := teacher.Forward(idx)
	logits, _ := student.Forward(idx)
	loss, _ := nn.MSELoss(logits, soft)
	m, err := g.Compile(loss, graph.WithRespectTo(student.Parameters()...))
	if err != nil {
		fmt.Println(err)
		return
	}
	params, _ := nn.ParamTensors(student) // in Parameters' order, as the gradients
	frozen, _ := nn.ParamTensors(teacher)
	before := graph.Float64s(frozen[0].Value)
	opt := optim.NewAdamW(3e-3)

	r := rng.New(1, "distillation batches")
	ids := make([]float64, batch*T)
	var first, last float64
	for step := range 300 {
		for i := range ids {
			ids[i] = float64(r.IntN(vocab))
		}
		m.Set(idx, tensor.New(tensor.WithShape(batch, T), tensor.WithBacking(ids)))
		if err := m.Run(); err != nil {
			fmt.Println(err)
			return
		}
		grads, _ := m.Grads()
		if err := opt.Step(params, grads); err != nil {
			fmt.Println(err)
			return
		}
		if l, _ := m.Loss(); step == 0 {
			first = l
		} else {
			last = l
		}
	}
	fmt.Println("student's loss fell below a third:", last < first/3)
	fmt.Println("teacher unchanged:", slices.Equal(before, graph.Float64s(frozen[0].Value)))
	// Output:
	// student's loss fell below a third: true
	// teacher unchanged: true
}
