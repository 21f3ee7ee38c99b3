package nn_test

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/graphtest"
	"github.com/geluproject/gelu/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gptLoss builds a GPT of cfg on a new graph of dtype dt seeded by seed,
// with token inputs ids and targets of batch × seq, and returns the graph,
// the inputs, the logits and the mean cross-entropy.
func gptLoss(tb testing.TB, dt tensor.Dtype, seed uint64, cfg nn.GPTConfig, batch, seq int) (g *graph.Graph, ids, targets, logits, loss *G.Node) {
	tb.Helper()
	g, err := graph.New(dt, seed)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := nn.NewGPT(g, "", cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ids, _ = g.Input("ids", batch, seq)
	targets, _ = g.Input("targets", batch, seq)
	logits, loss, err = m.Loss(ids, targets)
	if err != nil {
		tb.Fatal(err)
	}
	return g, ids, targets, logits, loss
}

// gptTrainer is gptLoss compiled for training, with the tokens ids and
// targets (batch × seq values, row-major) set.
func gptTrainer(tb testing.TB, dt tensor.Dtype, seed uint64, cfg nn.GPTConfig, batch, seq int, ids, targets []float64) (*graph.Graph, *graph.Machine) {
	tb.Helper()
	g, idn, tgn, _, loss := gptLoss(tb, dt, seed, cfg, batch, seq)
	m, err := g.Compile(loss)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.Set(idn, denseOf(dt, ids, batch, seq)); err != nil {
		tb.Fatal(err)
	}
	if err := m.Set(tgn, denseOf(dt, targets, batch, seq)); err != nil {
		tb.Fatal(err)
	}
	return g, m
}

// forwardOutput adds an input x of xv's shape to g, applies forward to it,
// runs the graph on xv and returns the output's values.
func forwardOutput(t *testing.T, g *graph.Graph, forward func(*G.Node) (*G.Node, error), xv *tensor.Dense) []float64 {
	t.Helper()
	x, err := g.Input("x", xv.Shape()...)
	if err != nil {
		t.Fatal(err)
	}
	y, err := forward(x)
	if err != nil {
		t.Fatal(err)
	}
	return graphtest.Output(t, g, x, y, xv)
}
