package mlpnet

// How an initialization scales the signal from layer to layer: the root
// mean square of every hidden layer's pre-activations in untrained MLPs,
// one row per network, as a report table and summary values.

import (
	"fmt"
	"math"
	"slices"

	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// InitRMS measures the untrained MLP classifiers build(0), …,
// build(len(names)−1), each with layers hidden layers, on the batch x
// (probe.RMS): the root mean square of each hidden layer's pre-activations
// (mlp.Pre), of the logits, and the factor per layer, the geometric mean
// of the ratios between consecutive hidden layers (NaN with one hidden
// layer). It returns the table (a row per network: titles[i], "layer 1",
// …, "logits", "factor per layer") and records the values in r as
// key.<names[i]>.<k> (k = 1, …, layers + 1, the last the logits) and
// key.<names[i]>.factor.
func InitRMS(r *report.Report, key string, names, titles []string, layers int, x *tensor.Dense,
	build func(i int) (train.Model, *nn.MLP, error)) (report.TableData, error) {
	t := report.TableData{Header: []string{"activation"}}
	for i := range layers {
		t.Header = append(t.Header, fmt.Sprintf("layer %d", i+1))
	}
	t.Header = append(t.Header, "logits", "factor per layer")
	for i, name := range names {
		model, mlp, err := build(i)
		if err != nil {
			return report.TableData{}, err
		}
		rms, err := probe.RMS(model.Graph, model.Input, x, append(slices.Clone(mlp.Pre), model.Output)...)
		if err != nil {
			return report.TableData{}, err
		}
		if len(rms) != layers+1 {
			return report.TableData{}, fmt.Errorf("mlpnet.InitRMS: network %s has %d hidden layers, want %d", name, len(rms)-1, layers)
		}
		row := []any{titles[i]}
		for k, v := range rms {
			r.Set(fmt.Sprintf("%s.%s.%d", key, name, k+1), v)
			row = append(row, v)
		}
		f := math.NaN()
		if layers > 1 {
			f = math.Pow(rms[layers-1]/rms[0], 1/float64(layers-1))
		}
		r.Set(key+"."+name+".factor", f)
		t.Rows = append(t.Rows, append(row, f))
	}
	return t, nil
}
