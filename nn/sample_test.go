package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/geluproject/gelu/nn"
)

func TestSamplerGreedyAndTopOne(t *testing.T) {
	logits := []float64{0.5, 2, -1, 2, 0}
	for _, cfg := range []nn.SampleConfig{{Temperature: 0}, {Temperature: 5, TopK: 1}} {
		s, err := nn.NewSampler(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			if got, _ := s.Next(logits); got != 1 {
				t.Fatalf("%+v: token %d, want 1 (the first of the two largest)", cfg, got)
			}
		}
	}
}

// Frequencies over many draws match softmax(logits/T) restricted to the
// top k, computed here directly, within 5 standard errors.
func TestSamplerFrequencies(t *testing.T) {
	logits := []float64{1, 0.2, -0.5, 2, 0.7, -3}
	const draws = 200000
	for _, cfg := range []nn.SampleConfig{{Temperature: 1, Seed: 1}, {Temperature: 0.5, TopK: 3, Seed: 2}, {Temperature: 2, TopK: 5, Seed: 3}} {
		kept := []int{0, 1, 2, 3, 4, 5}
		if cfg.TopK > 0 {
			slices.SortFunc(kept, func(a, b int) int { return -cmpFloat(logits[a], logits[b]) })
			kept = kept[:cfg.TopK]
		}
		want := make([]float64, len(logits))
		z := 0.0
		for _, i := range kept {
			want[i] = math.Exp(logits[i] / cfg.Temperature)
			z += want[i]
		}
		s, _ := nn.NewSampler(cfg)
		count := make([]float64, len(logits))
		for i := 0; i < draws; i++ {
			k, err := s.Next(logits)
			if err != nil {
				t.Fatal(err)
			}
			count[k]++
		}
		for i := range want {
			p := want[i] / z
			se := math.Sqrt(p*(1-p)/draws) + 1e-12
			if got := count[i] / draws; math.Abs(got-p) > 5*se {
				t.Errorf("%+v: token %d drawn %.4f of the time, want %.4f (±%.4f)", cfg, i, got, p, se)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestGenerateIsSeeded(t *testing.T) {
	// A toy model: the next token prefers (last+1) mod 5.
	model := func(tokens []int) ([]float64, error) {
		l := make([]float64, 5)
		l[(tokens[len(tokens)-1]+1)%5] = 1.5
		return l, nil
	}
	gen := func(seed uint64) []int {
		s, _ := nn.NewSampler(nn.SampleConfig{Temperature: 1, Seed: seed})
		out, err := nn.Generate(model, []int{0}, 40, s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, c := gen(7), gen(7), gen(8)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different text")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same 40 tokens")
	}
	if len(a) != 41 || a[0] != 0 {
		t.Errorf("generated %v, want the prompt and 40 tokens", a)
	}
}

func TestSamplerErrors(t *testing.T) {
	for _, cfg := range []nn.SampleConfig{{Temperature: -1}, {Temperature: math.NaN()}, {Temperature: math.Inf(1)}, {TopK: -2}} {
		if _, err := nn.NewSampler(cfg); err == nil {
			t.Errorf("NewSampler(%+v) accepted", cfg)
		}
	}
	// Greedy decoding (temperature 0) refuses what sampling refuses, with
	// the same error.
	s, _ := nn.NewSampler(nn.SampleConfig{Temperature: 1})
	greedy, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0})
	top1, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0.5, TopK: 1})
	for _, l := range [][]float64{nil, {1, math.NaN()}, {math.Inf(1), 0}, {math.Inf(-1), math.Inf(-1)}, {math.Inf(-1)}} {
		_, err := s.Next(l)
		if err == nil {
			t.Errorf("Next(%v) accepted", l)
			continue
		}
		for name, other := range map[string]*nn.Sampler{"greedy": greedy, "top-1": top1} {
			if tok, gerr := other.Next(l); gerr == nil || gerr.Error() != err.Error() {
				t.Errorf("%s Next(%v) = %d, %v; want the error sampling gives: %v", name, l, tok, gerr, err)
			}
		}
	}
	if _, err := nn.Generate(nil, nil, 3, s); err == nil {
		t.Error("Generate with a nil model accepted")
	}
}
