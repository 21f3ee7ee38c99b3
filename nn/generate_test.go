package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

// NextToken's logits (with the key-value cache) and NextTokenUncached's
// for every prefix of a sequence equal the training graph's logits at that
// position (causal attention: later tokens do not matter), before and
// after an optimizer step: the cache notices the new weights.
func TestGPTNextTokenMatchesTheModel(t *testing.T) {
	t.Run("cached", func(t *testing.T) { testNextToken(t, (*nn.GPT).NextToken) })
	t.Run("uncached", func(t *testing.T) { testNextToken(t, (*nn.GPT).NextTokenUncached) })
}

func testNextToken(t *testing.T, newNext func(*nn.GPT) (func([]int) ([]float64, error), error)) {
	g, _ := graph.New(tensor.Float64, 3)
	m, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 5, VocabSize: 6, Layers: 2, Heads: 2, Dim: 8, UntieWeights: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := g.Input("ids", 1, 5)
	tg, _ := g.Input("targets", 1, 5)
	logits, loss, err := m.Loss(ids, tg)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := g.Compile(loss, graph.Keep(logits))
	if err != nil {
		t.Fatal(err)
	}
	seq := []int{4, 1, 5, 0, 2}
	mc.Set(ids, denseOf(tensor.Float64, []float64{4, 1, 5, 0, 2}, 1, 5))
	mc.Set(tg, denseOf(tensor.Float64, []float64{1, 5, 0, 2, 3}, 1, 5))
	next, err := newNext(m)
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 2; step++ {
		if err := mc.Run(); err != nil {
			t.Fatal(err)
		}
		v, _ := mc.Value(logits)
		full := v.(*tensor.Dense).Float64s()
		for k := 1; k <= len(seq); k++ {
			got, err := next(seq[:k])
			if err != nil {
				t.Fatal(err)
			}
			for j, x := range got {
				if want := full[(k-1)*6+j]; math.Abs(x-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("step %d, prefix %d, token %d: NextToken %v, model %v", step, k, j, x, want)
				}
			}
		}
		grads, _ := mc.Grads()
		if err := optim.NewAdamW(0.05).Step(g.ParamTensors(), grads); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := next([]int{7}); err == nil {
		t.Error("a token id outside the vocabulary was accepted")
	}
	s, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0.8, TopK: 3, Seed: 4})
	a, err := nn.Generate(next, []int{1}, 12, s)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0.8, TopK: 3, Seed: 4})
	b, _ := nn.Generate(next, []int{1}, 12, s2)
	if !slices.Equal(a, b) || len(a) != 13 {
		t.Errorf("generation not repeatable: %v and %v", a, b)
	}
}
