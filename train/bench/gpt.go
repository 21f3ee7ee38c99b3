package bench

// The GPT step: one AdamW training step of nn.GPT, the model of
// examples/char-gpt (examples/benchmark/bench_torch.py builds the same
// model as nanoGPT does).

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GPTVocab is the GPT step's vocabulary: the 91 distinct characters of
// Newton's Opticks, examples/char-gpt's default text.
const GPTVocab = 91

// gptConfig is a gpt workload's args.
type gptConfig struct{ layers, dim, heads, t, batch int }

func parseGPT(args string) (gptConfig, error) {
	var c gptConfig
	_, err := fmt.Sscanf(args, "L%d-d%d-h%d-T%d-B%d", &c.layers, &c.dim, &c.heads, &c.t, &c.batch)
	switch {
	case err != nil || c.String() != args:
		return c, fmt.Errorf("gpt %q, want L<blocks>-d<width>-h<heads>-T<context>-B<batch>, e.g. L4-d256-h8-T128-B16", args)
	case c.layers < 1 || c.dim < 1 || c.heads < 1 || c.t < 1 || c.batch < 1:
		return c, fmt.Errorf("gpt %q: want every size ≥ 1", args)
	case c.dim%c.heads != 0:
		return c, fmt.Errorf("gpt %q: %d heads do not divide the width %d", args, c.heads, c.dim)
	}
	return c, nil
}

func (c gptConfig) String() string {
	return fmt.Sprintf("L%d-d%d-h%d-T%d-B%d", c.layers, c.dim, c.heads, c.t, c.batch)
}

// GPTWork is the tokens of one GPT step: batch·T.
func GPTWork(args string) (float64, error) {
	c, err := parseGPT(args)
	return float64(c.batch * c.t), err
}

// newGPT adds the model to a new graph (seed 1) with the precision p.
func newGPT(c gptConfig, dt tensor.Dtype, p graph.Precision) (*graph.Graph, *nn.GPT, error) {
	g, err := graph.New(dt, 1)
	if err != nil {
		return nil, nil, err
	}
	if err := g.SetAutocast(p); err != nil {
		return nil, nil, err
	}
	m, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: c.t, VocabSize: GPTVocab, Layers: c.layers, Heads: c.heads, Dim: c.dim})
	return g, m, err
}

// GPTParams counts the trainable scalars of the model of a GPT step's
// args, from its graph (the tied embedding once).
func GPTParams(args string) (int, error) {
	c, err := parseGPT(args)
	if err != nil {
		return 0, err
	}
	g, _, err := newGPT(c, tensor.Float32, graph.Full)
	if err != nil {
		return 0, err
	}
	return g.NumParams(), nil
}

// GPT is one AdamW training step (PyTorch's defaults) of nanoGPT's model
// (nn.GPT with tied embeddings, vocabulary GPTVocab, seed 1) on one fixed
// seeded batch of ids and next-token targets, uniform over the
// vocabulary; args is L<blocks>-d<width>-h<heads>-T<context>-B<batch>.
func GPT(args string, dt tensor.Dtype) (func() error, int, error) {
	return gpt(args, dt, graph.Full)
}

// GPTBF16 is GPT in float32 with the matrix products under
// graph.SetAutocast(BFloat16).
func GPTBF16(args string) (func() error, int, error) {
	return gpt(args, tensor.Float32, graph.BFloat16)
}

func gpt(args string, dt tensor.Dtype, p graph.Precision) (func() error, int, error) {
	c, err := parseGPT(args)
	if err != nil {
		return nil, 0, err
	}
	g, m, err := newGPT(c, dt, p)
	if err != nil {
		return nil, 0, err
	}
	ids, err := g.Input("ids", c.batch, c.t)
	if err != nil {
		return nil, 0, err
	}
	targets, err := g.Input("targets", c.batch, c.t)
	if err != nil {
		return nil, 0, err
	}
	_, loss, err := m.Loss(ids, targets)
	if err != nil {
		return nil, 0, err
	}
	mc, err := g.Compile(loss)
	if err != nil {
		return nil, 0, err
	}
	r := rng.New(1, "benchmark gpt")
	for _, n := range []*G.Node{ids, targets} {
		v := tensor.New(tensor.Of(dt), tensor.WithShape(c.batch, c.t))
		for i := range c.batch {
			for j := range c.t {
				if err := v.SetAt(castToken(dt, r.IntN(GPTVocab)), i, j); err != nil {
					return nil, 0, err
				}
			}
		}
		if err := mc.Set(n, v); err != nil {
			return nil, 0, err
		}
	}
	opt, params := optim.NewAdamW(1e-3), g.ParamTensors()
	return func() error { return trainStep(mc, opt, params) }, 1, nil
}

// castToken returns a token id as a value of dtype dt (ids are stored as
// floats).
func castToken(dt tensor.Dtype, id int) any {
	if dt == tensor.Float32 {
		return float32(id)
	}
	return float64(id)
}
