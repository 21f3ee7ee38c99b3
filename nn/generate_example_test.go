package nn_test

import (
	"fmt"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
)

// A tiny character-level GPT learns a repeating sentence, then continues a
// prompt: NextToken (with its key-value cache, one new position per
// token while the context fits the BlockSize of 8, the whole window once
// it slides) feeds Generate, which draws each character with a seeded
// Sampler (here greedy: temperature 0).
func ExampleGPT_NextToken() {
	text := strings.Repeat("gelu is smooth. ", 4)
	vocab := slices.Compact(slices.Sorted(slices.Values([]rune(text))))
	id := func(r rune) int { return slices.Index(vocab, r) }

	const T, batch = 8, 16
	g, _ := graph.New(tensor.Float64, 1)
	model, _ := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: T, VocabSize: len(vocab), Layers: 1, Heads: 2, Dim: 16})
	idx, _ := g.Input("idx", batch, T)
	targets, _ := g.Input("targets", batch, T)
	_, loss, _ := model.Loss(idx, targets)
	m, _ := g.Compile(loss)
	x, y := make([]float64, 0, batch*T), make([]float64, 0, batch*T)
	for b := range batch { // every window of the 16-character period
		for t := range T {
			x, y = append(x, float64(id(rune(text[b+t])))), append(y, float64(id(rune(text[b+t+1]))))
		}
	}
	m.Set(idx, tensor.New(tensor.WithShape(batch, T), tensor.WithBacking(x)))
	m.Set(targets, tensor.New(tensor.WithShape(batch, T), tensor.WithBacking(y)))
	opt := optim.NewAdamW(0.02)
	for range 150 {
		m.Run()
		grads, _ := m.Grads()
		opt.Step(g.ParamTensors(), grads)
	}

	next, _ := model.NextToken() // model.NextTokenUncached() gives the same, slower
	sampler, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0, Seed: 1})
	prompt := []int{id('g'), id('e'), id('l'), id('u')}
	out, err := nn.Generate(next, prompt, 30, sampler)
	if err != nil {
		fmt.Println(err)
		return
	}
	var s strings.Builder
	for _, t := range out {
		s.WriteRune(vocab[t])
	}
	fmt.Printf("%q\n", s.String())
	// Output:
	// "gelu is smooth. gelu is smooth. ge"
}
