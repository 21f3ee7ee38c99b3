package nn

// Sampling from a language model's next-token distribution: temperature,
// top-k, a seeded random stream, and a generation loop over any model that
// maps a context to next-token logits.

import (
	"fmt"
	"math"
	"sort"

	"github.com/geluproject/gelu/graph/rng"
)

// SampleConfig says how the next token is drawn.
type SampleConfig struct {
	// Temperature divides the logits before the softmax: 1 samples from the
	// model's distribution, below 1 sharpens it, 0 takes the most likely
	// token (greedy decoding).
	Temperature float64
	// TopK keeps only the K most likely tokens before sampling (as
	// nanoGPT's sample.py); 0 keeps all.
	TopK int
	// Seed selects the random stream: the same seed, model and prompt give
	// the same text.
	Seed uint64
}

// Sampler draws tokens from logits as its SampleConfig says.
type Sampler struct {
	cfg   SampleConfig
	r     *rng.RNG
	order []int
	probs []float64
}

// NewSampler checks cfg and returns a sampler with its own random stream.
func NewSampler(cfg SampleConfig) (*Sampler, error) {
	if !(cfg.Temperature >= 0) || math.IsInf(cfg.Temperature, 0) {
		return nil, fmt.Errorf("nn.Sampler: temperature %v, want a finite value ≥ 0", cfg.Temperature)
	}
	if cfg.TopK < 0 {
		return nil, fmt.Errorf("nn.Sampler: top-k %d, want ≥ 0", cfg.TopK)
	}
	return &Sampler{cfg: cfg, r: rng.New(cfg.Seed, "nn.sample")}, nil
}

// Next returns a token drawn from the distribution softmax(logits/T),
// restricted to the top-k tokens. Ties are broken towards the smaller id,
// so the result does not depend on the sort's stability.
func (s *Sampler) Next(logits []float64) (int, error) {
	n := len(logits)
	if n == 0 {
		return 0, fmt.Errorf("nn.Sampler: no logits")
	}
	possible := false
	for i, v := range logits {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return 0, fmt.Errorf("nn.Sampler: logit %d is %v", i, v)
		}
		possible = possible || !math.IsInf(v, -1)
	}
	// Checked before greedy decoding returns, so that every temperature
	// refuses the same logits with the same error.
	if !possible {
		return 0, fmt.Errorf("nn.Sampler: every logit is -Inf: no token has a probability")
	}
	s.order = s.order[:0]
	for i := range logits {
		s.order = append(s.order, i)
	}
	sort.Slice(s.order, func(a, b int) bool {
		i, j := s.order[a], s.order[b]
		return logits[i] > logits[j] || logits[i] == logits[j] && i < j
	})
	k := n
	if s.cfg.TopK > 0 && s.cfg.TopK < n {
		k = s.cfg.TopK
	}
	if s.cfg.Temperature == 0 {
		return s.order[0], nil
	}
	top := logits[s.order[0]]
	s.probs = s.probs[:0]
	total := 0.0
	for _, i := range s.order[:k] {
		p := math.Exp((logits[i] - top) / s.cfg.Temperature)
		s.probs = append(s.probs, p)
		total += p
	}
	u := s.r.Float64() * total
	for j, p := range s.probs {
		if u < p {
			return s.order[j], nil
		}
		u -= p
	}
	return s.order[k-1], nil // u fell past the end by rounding
}

// Generate appends n tokens to prompt, each drawn by s from the logits
// next returns for the sequence so far (a model's next-token logits; it
// may look only at the last tokens that fit its context).
func Generate(next func(tokens []int) ([]float64, error), prompt []int, n int, s *Sampler) ([]int, error) {
	if next == nil || s == nil {
		return nil, fmt.Errorf("nn.Generate: nil model or sampler")
	}
	if n < 0 {
		return nil, fmt.Errorf("nn.Generate: %d tokens, want ≥ 0", n)
	}
	out := append([]int(nil), prompt...)
	for i := 0; i < n; i++ {
		logits, err := next(out)
		if err != nil {
			return nil, fmt.Errorf("nn.Generate: token %d: %w", i, err)
		}
		t, err := s.Next(logits)
		if err != nil {
			return nil, fmt.Errorf("nn.Generate: token %d: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}
