package optim_test

// Trajectories recorded from PyTorch by testdata/gen_torch_fixture.py:
// float64 parameters after every step, the final optimizer state, clipping
// and schedulers. The comparison is to 1e-12 relative: PyTorch's vectorized
// kernels fuse some multiply-adds (FMA) that this package rounds
// separately, so the last bits may differ.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

type torchFixture struct {
	TorchVersion string `json:"torch_version"`
	Steps        int
	Cases        []struct {
		Name      string
		Dtype     string
		Optimizer string
		Options   map[string]any
		Shapes    map[string][]int
		Params    map[string]any
		Grads     []map[string]any
		LRs       []float64 `json:"lrs"`
		After     []map[string]any
		State     map[string]any
	}
	Clip []struct {
		MaxNorm float64 `json:"max_norm"`
		Grads   []any
		Shapes  [][]int
		Norm    float64
		Clipped []any
	}
	Schedules []struct {
		Kind     string
		LR       float64 `json:"lr"`
		StepSize int     `json:"step_size"`
		Gamma    float64
		Total    int
		MinLR    float64   `json:"min_lr"`
		LRs      []float64 `json:"lrs"`
	}
}

func loadTorchFixture(t *testing.T) *torchFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/torch_optim.json")
	if err != nil {
		t.Fatal(err)
	}
	var f torchFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 || len(f.Clip) == 0 || len(f.Schedules) == 0 {
		t.Fatal("fixture has no cases")
	}
	return &f
}

// flat flattens nested JSON arrays of numbers.
func flat(v any) []float64 {
	switch x := v.(type) {
	case float64:
		return []float64{x}
	case []any:
		var out []float64
		for _, e := range x {
			out = append(out, flat(e)...)
		}
		return out
	}
	panic("unexpected JSON value")
}

func opt(options map[string]any, key string, def float64) float64 {
	if v, ok := options[key].(float64); ok {
		return v
	}
	return def
}

func flag(options map[string]any, key string) bool {
	v, _ := options[key].(bool)
	return v
}

func torchOptimizer(t *testing.T, kind string, o map[string]any) optim.Optimizer {
	lr := o["lr"].(float64)
	b1, b2 := 0.9, 0.999
	if betas, ok := o["betas"].([]any); ok {
		b1, b2 = betas[0].(float64), betas[1].(float64)
	}
	switch kind {
	case "SGD":
		return &optim.SGD{LearningRate: lr, Momentum: opt(o, "momentum", 0), Dampening: opt(o, "dampening", 0),
			WeightDecay: opt(o, "weight_decay", 0), Nesterov: flag(o, "nesterov"), Maximize: flag(o, "maximize")}
	case "Adam":
		a := optim.NewAdam(lr)
		a.Beta1, a.Beta2, a.Eps, a.WeightDecay = b1, b2, opt(o, "eps", 1e-8), opt(o, "weight_decay", 0)
		a.AMSGrad, a.Maximize = flag(o, "amsgrad"), flag(o, "maximize")
		return a
	case "AdamW":
		a := optim.NewAdamW(lr)
		a.Beta1, a.Beta2, a.Eps, a.WeightDecay = b1, b2, opt(o, "eps", 1e-8), opt(o, "weight_decay", 1e-2)
		a.AMSGrad, a.Maximize = flag(o, "amsgrad"), flag(o, "maximize")
		return a
	}
	t.Fatalf("unknown optimizer %q", kind)
	return nil
}

// PyTorch's float32 kernels round every operation to float32, as this
// package's do; they differ in the order and fusion of a few operations, so
// float32 agrees to a few float32 ulps.
func TestMatchesPyTorch(t *testing.T) {
	f := loadTorchFixture(t)
	names := []string{"fc.weight", "fc.bias"}
	worst := map[string]float64{}
	for _, c := range f.Cases {
		dt, tl := tensor.Float64, tol{abs: 1e-15, rel: 1e-12}
		if c.Dtype == "float32" {
			dt, tl = tensor.Float32, tol{abs: 1e-6, rel: 1e-5}
		}
		t.Run(c.Name+"/"+c.Dtype, func(t *testing.T) {
			o := torchOptimizer(t, c.Optimizer, c.Options)
			params := make([]graph.NamedTensor, len(names))
			for i, n := range names {
				params[i] = graph.NamedTensor{Name: n, Value: dense(dt, c.Shapes[n], flat(c.Params[n]))}
			}
			for step := 0; step < f.Steps; step++ {
				o.SetLR(c.LRs[step])
				grads := make([]*tensor.Dense, len(names))
				for i, n := range names {
					grads[i] = dense(dt, c.Shapes[n], flat(c.Grads[step][n]))
				}
				if err := o.Step(params, grads); err != nil {
					t.Fatal(err)
				}
				for i, n := range names {
					want := flat(c.After[step][n])
					got := graph.Float64s(params[i].Value)
					mustClose(t, fmt.Sprintf("%s after step %d", n, step), got, want, tl)
					worst[c.Dtype] = max(worst[c.Dtype], maxRel(got, want))
				}
			}
			state := map[string][]float64{}
			for _, nt := range o.State() {
				state[nt.Name] = graph.Float64s(nt.Value)
			}
			if len(state) != len(c.State) {
				t.Fatalf("state has keys %v, PyTorch's has %d", keys(state), len(c.State))
			}
			for k, v := range c.State {
				got, ok := state[k]
				if !ok {
					t.Fatalf("state lacks PyTorch's key %q (have %v)", k, keys(state))
				}
				mustClose(t, "state "+k, got, flat(v), tl)
			}
		})
	}
	t.Logf("PyTorch %s: largest relative difference of a parameter: float64 %.3g, float32 %.3g",
		f.TorchVersion, worst["float64"], worst["float32"])
}

func TestClipGradNormMatchesPyTorch(t *testing.T) {
	f := loadTorchFixture(t)
	for _, c := range f.Clip {
		grads := make([]*tensor.Dense, len(c.Grads))
		for i := range grads {
			grads[i] = dense(tensor.Float64, c.Shapes[i], flat(c.Grads[i]))
		}
		norm, err := optim.ClipGradNorm(grads, c.MaxNorm)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(norm-c.Norm) > 1e-13*c.Norm {
			t.Errorf("max norm %v: norm %.17g, PyTorch %.17g", c.MaxNorm, norm, c.Norm)
		}
		for i := range grads {
			mustClose(t, "clipped grad", graph.Float64s(grads[i]), flat(c.Clipped[i]), tol{abs: 1e-15, rel: 1e-13})
		}
	}
}

func TestSchedulesMatchPyTorch(t *testing.T) {
	f := loadTorchFixture(t)
	for _, c := range f.Schedules {
		var s optim.Schedule
		var err error
		switch c.Kind {
		case "steplr":
			s, err = optim.StepLR(c.LR, c.StepSize, c.Gamma)
		case "cosine":
			s, err = optim.Cosine(c.LR, c.Total, c.MinLR)
		default:
			t.Fatalf("unknown schedule %q", c.Kind)
		}
		if err != nil {
			t.Fatal(err)
		}
		for step, want := range c.LRs {
			// PyTorch's schedulers update recursively, so allow rounding.
			if got := s.LR(step); math.Abs(got-want) > 1e-14*want {
				t.Errorf("%v step %d: %.17g, PyTorch %.17g", s, step, got, want)
			}
		}
	}
}

func maxRel(got, want []float64) float64 {
	m := 0.0
	for i := range got {
		if want[i] != 0 {
			m = max(m, math.Abs(got[i]-want[i])/math.Abs(want[i]))
		}
	}
	return m
}

func keys(m map[string][]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
