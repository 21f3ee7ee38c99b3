package optim_test

// The state format that checkpoints hold. testdata/state_one_group.json is
// the State of single-group optimizers after three steps, and their
// parameters, written by
//
//	go test ./optim -run TestStateFormat -update-state
//
// Regenerate it only to change the format on purpose: checkpoints on disk
// hold this one. The test checks that the optimizers produce the same
// names, dtypes, shapes and bits (state and parameters) from the same
// steps, and that they load the file and continue exactly as an
// uninterrupted run.

import (
	"encoding/json"
	goflag "flag"
	"fmt"
	"os"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

var updateState = goflag.Bool("update-state", false, "rewrite testdata/state_one_group.json")

const stateGolden = "testdata/state_one_group.json"

type savedTensor struct {
	Name   string    `json:"name"`
	Dtype  string    `json:"dtype"`
	Shape  []int     `json:"shape"`
	Values []float64 `json:"values"`
}

// formatCases are the optimizers of the golden file, one per kind of state.
var formatCases = []struct {
	name string
	make func() optim.Optimizer
}{
	{"sgd-nesterov", func() optim.Optimizer {
		return &optim.SGD{LearningRate: 0.05, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-3}
	}},
	{"adam-amsgrad", func() optim.Optimizer {
		a := optim.NewAdam(0.01)
		a.AMSGrad, a.WeightDecay = true, 0.01
		return a
	}},
	{"adamw", func() optim.Optimizer { return optim.NewAdamW(0.01) }},
}

func saveState(st []graph.NamedTensor) []savedTensor {
	out := make([]savedTensor, len(st))
	for i, nt := range st {
		out[i] = savedTensor{Name: nt.Name, Dtype: nt.Value.Dtype().String(), Shape: nt.Value.Shape().Clone(), Values: graph.Float64s(nt.Value)}
	}
	return out
}

func restoreState(t *testing.T, st []savedTensor) []graph.NamedTensor {
	out := make([]graph.NamedTensor, len(st))
	for i, s := range st {
		dt := tensor.Float64
		if s.Dtype == "float32" {
			dt = tensor.Float32
		}
		out[i] = graph.NamedTensor{Name: s.Name, Value: dense(dt, s.Shape, s.Values)}
	}
	return out
}

func TestStateFormat(t *testing.T) {
	got := map[string][]savedTensor{}
	for _, dt := range dtypes {
		for _, c := range formatCases {
			o := c.make()
			p := testParams(dt)
			for s := 0; s < 3; s++ {
				if err := o.Step(p, testGrads(dt, s)); err != nil {
					t.Fatal(err)
				}
			}
			got[fmt.Sprint(c.name, "/", dt)] = saveState(o.State())
			got[fmt.Sprint(c.name, "/", dt, "/params")] = saveState(p)
		}
	}
	if *updateState {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stateGolden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", stateGolden)
	}
	b, err := os.ReadFile(stateGolden)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]savedTensor
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("golden file has %d cases, the test runs %d", len(want), len(got))
	}
	for _, dt := range dtypes {
		for _, c := range formatCases {
			key := fmt.Sprint(c.name, "/", dt)
			t.Run(key, func(t *testing.T) {
				w, g := want[key], got[key]
				if len(w) != len(g) {
					t.Fatalf("state has %d tensors, the file %d", len(g), len(w))
				}
				wp, gp := want[key+"/params"], got[key+"/params"]
				if len(wp) != len(gp) {
					t.Fatalf("%d parameters, the file has %d", len(gp), len(wp))
				}
				for i := range wp {
					if !equalBits(gp[i].Values, wp[i].Values) {
						t.Fatalf("parameter %s differs from the file's", wp[i].Name)
					}
				}
				for i := range w {
					if g[i].Name != w[i].Name || g[i].Dtype != w[i].Dtype || fmt.Sprint(g[i].Shape) != fmt.Sprint(w[i].Shape) {
						t.Fatalf("state %d is %s %s%v, the file has %s %s%v", i, g[i].Name, g[i].Dtype, g[i].Shape, w[i].Name, w[i].Dtype, w[i].Shape)
					}
					if !equalBits(g[i].Values, w[i].Values) {
						t.Fatalf("%s: values differ from the file's", w[i].Name)
					}
				}

				// Loading the file continues as the run that wrote it.
				a, b := c.make(), c.make()
				pa := testParams(dt)
				for s := 0; s < 3; s++ {
					if err := a.Step(pa, testGrads(dt, s)); err != nil {
						t.Fatal(err)
					}
				}
				pb := cloneParams(pa)
				if err := b.LoadState(pb, restoreState(t, w)); err != nil {
					t.Fatal(err)
				}
				for s := 3; s < 5; s++ {
					if err := a.Step(pa, testGrads(dt, s)); err != nil {
						t.Fatal(err)
					}
					if err := b.Step(pb, testGrads(dt, s)); err != nil {
						t.Fatal(err)
					}
				}
				for i := range pa {
					if !equalBits(graph.Float64s(pa[i].Value), graph.Float64s(pb[i].Value)) {
						t.Fatalf("%s differs after loading the file", pa[i].Name)
					}
				}
			})
		}
	}
}
