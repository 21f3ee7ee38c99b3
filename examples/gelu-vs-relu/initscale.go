package main

// The size of the signal through the untrained network: the root mean
// square of each hidden layer's pre-activations on one training batch.
// With unit-norm rows a layer's pre-activations have mean square equal to
// the mean square of its inputs (averaged over random directions), so the
// activation alone decides whether the signal keeps its size with depth;
// it explains why plain SGD starts slowly for some activations.

import (
	"fmt"
	"math"
	"slices"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// initScale returns, per activation, the RMS of the pre-activations of
// each hidden layer at initialization (seed c.Seed), on the first batch of
// epoch 0.
func initScale(c config, d *data) ([][]float64, error) {
	l, err := datasets.NewLoader(d.train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: c.Seed, DropLast: true})
	if err != nil {
		return nil, err
	}
	b, err := l.Batch(0, 0)
	if err != nil {
		return nil, err
	}
	var out [][]float64
	for _, a := range c.Acts {
		g, err := graph.New(tensor.Float32, c.Seed)
		if err != nil {
			return nil, err
		}
		mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: d.train.Features, Hidden: slices.Repeat([]int{c.Width}, c.Layers),
			Out: d.train.Classes, Activation: a, WeightInit: graph.UnitNormRows(), BiasInit: graph.Zeros()})
		if err != nil {
			return nil, err
		}
		x, err := g.Input("x", c.Batch, d.train.Features)
		if err != nil {
			return nil, err
		}
		logits, err := mlp.Forward(x)
		if err != nil {
			return nil, err
		}
		m, err := g.Compile(nil, graph.Keep(append(slices.Clone(mlp.Pre), logits)...))
		if err != nil {
			return nil, err
		}
		if err := m.Set(x, b.X); err != nil {
			return nil, err
		}
		if err := m.Run(); err != nil {
			return nil, err
		}
		var rms []float64
		for _, n := range append(slices.Clone(mlp.Pre), logits) {
			v, err := m.Value(n)
			if err != nil {
				return nil, err
			}
			t, ok := v.(*tensor.Dense)
			if !ok || t.Dtype() != tensor.Float32 {
				return nil, fmt.Errorf("init scale: node %s holds %T, want a float32 tensor", n.Name(), v)
			}
			var ss float64
			for _, f := range t.Float32s() {
				ss += float64(f) * float64(f)
			}
			rms = append(rms, math.Sqrt(ss/float64(len(t.Float32s()))))
		}
		m.Close()
		out = append(out, rms)
	}
	return out, nil
}

func initScaleTable(r *report.Report, c config, d *data) error {
	rms, err := initScale(c, d)
	if err != nil {
		return err
	}
	header := []string{"activation"}
	for i := range c.Layers {
		header = append(header, fmt.Sprintf("layer %d", i+1))
	}
	header = append(header, "logits", "factor per layer")
	var rows [][]any
	for i, a := range c.Acts {
		row := []any{label(a)}
		for k, v := range rms[i] {
			row = append(row, v)
			r.Set(fmt.Sprintf("init_rms.%s.%d", a.Name(), k+1), v)
		}
		// The geometric mean of the ratios between consecutive hidden layers.
		f := math.NaN()
		if c.Layers > 1 {
			f = math.Pow(rms[i][c.Layers-1]/rms[i][0], 1/float64(c.Layers-1))
		}
		row = append(row, f)
		r.Set("init_rms."+a.Name()+".factor", f)
		rows = append(rows, row)
	}
	r.Text(fmt.Sprintf("Root mean square of each hidden layer's pre-activations (and of the logits) at initialization, seed %d, "+
		"on the first training batch; the factor is the geometric mean of the ratios between consecutive hidden layers:", c.Seed))
	return r.Table("init_rms", header, rows)
}
