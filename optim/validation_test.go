package optim_test

// Every validation error: hyperparameters with PyTorch's rules, the
// arguments of Step, and NaN/Inf gradients, which must leave every
// parameter and all state untouched.

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

func TestHyperparameterValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	adam := func(f func(a *optim.Adam)) optim.Optimizer { a := optim.NewAdam(1e-3); f(a); return a }
	adamw := func(f func(a *optim.Adam)) optim.Optimizer { a := optim.NewAdamW(1e-3); f(a); return a }
	cases := []struct {
		name string
		o    optim.Optimizer
		want string
	}{
		{"sgd negative lr", &optim.SGD{LearningRate: -0.1}, "learning rate -0.1"},
		{"sgd NaN lr", &optim.SGD{LearningRate: nan}, "learning rate NaN"},
		{"sgd Inf lr", &optim.SGD{LearningRate: inf}, "learning rate +Inf"},
		{"sgd negative momentum", &optim.SGD{LearningRate: 0.1, Momentum: -0.5}, "momentum -0.5"},
		{"sgd NaN dampening", &optim.SGD{LearningRate: 0.1, Momentum: 0.5, Dampening: nan}, "dampening NaN"},
		{"sgd negative weight decay", &optim.SGD{LearningRate: 0.1, WeightDecay: -1}, "weight decay -1"},
		{"nesterov without momentum", &optim.SGD{LearningRate: 0.1, Nesterov: true}, "Nesterov momentum requires momentum > 0"},
		{"nesterov with dampening", &optim.SGD{LearningRate: 0.1, Momentum: 0.9, Dampening: 0.1, Nesterov: true}, "dampening 0.1"},
		{"adam NaN lr", adam(func(a *optim.Adam) { a.LearningRate = nan }), "learning rate NaN"},
		{"adam beta1 = 1", adam(func(a *optim.Adam) { a.Beta1 = 1 }), "beta1 1"},
		{"adam negative beta2", adam(func(a *optim.Adam) { a.Beta2 = -0.1 }), "beta2 -0.1"},
		{"adam NaN beta2", adam(func(a *optim.Adam) { a.Beta2 = nan }), "beta2 NaN"},
		{"adam zero eps", adam(func(a *optim.Adam) { a.Eps = 0 }), "eps 0"},
		{"adam struct literal", &optim.Adam{LearningRate: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, "not made by optim.NewAdam or optim.NewAdamW"},
		{"adamw struct literal", &optim.Adam{LearningRate: 1e-3, Decoupled: true}, "optim.AdamW: not made by"},
		{"adam NaN eps", adam(func(a *optim.Adam) { a.Eps = nan }), "eps NaN"},
		{"adam negative weight decay", adam(func(a *optim.Adam) { a.WeightDecay = -0.1 }), "weight decay -0.1"},
		{"adamw lr·λ > 1", adamw(func(a *optim.Adam) { a.LearningRate, a.WeightDecay = 10, 0.2 }), "flip"},
		{"adamw beta1 Inf", adamw(func(a *optim.Adam) { a.Beta1 = inf }), "beta1 +Inf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := []graph.NamedTensor{{Name: "w", Value: dense(tensor.Float64, []int{2}, []float64{1, 2})}}
			err := c.o.Step(p, []*tensor.Dense{dense(tensor.Float64, []int{2}, []float64{1, 1})})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
			if got := graph.Float64s(p[0].Value); !equalBits(got, []float64{1, 2}) {
				t.Fatalf("parameter changed to %v", got)
			}
		})
	}
	// The same rules are available before training starts.
	if err := (&optim.SGD{LearningRate: 0.1, Nesterov: true}).Validate(); err == nil {
		t.Error("SGD.Validate accepted Nesterov without momentum")
	}
	if err := optim.NewAdam(1e-3).Validate(); err != nil {
		t.Errorf("NewAdam defaults rejected: %v", err)
	}
	if err := optim.NewAdamW(1e-3).Validate(); err != nil {
		t.Errorf("NewAdamW defaults rejected: %v", err)
	}
}

func TestStepArgumentValidation(t *testing.T) {
	f64 := func(shape []int, v ...float64) *tensor.Dense { return dense(tensor.Float64, shape, v) }
	view := func() *tensor.Dense {
		m := f64([]int{2, 3}, 1, 2, 3, 4, 5, 6)
		v, err := m.Slice(nil, tensor.S(1))
		if err != nil {
			t.Fatal(err)
		}
		return v.(*tensor.Dense)
	}
	ints := tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2}))
	w := func() graph.NamedTensor { return graph.NamedTensor{Name: "w", Value: f64([]int{2}, 1, 2)} }
	cases := []struct {
		name   string
		params []graph.NamedTensor
		grads  []*tensor.Dense
		want   []string
	}{
		{"lengths", []graph.NamedTensor{w()}, nil, []string{"1 parameters but 0 gradients"}},
		{"empty name", []graph.NamedTensor{{Value: f64([]int{2}, 1, 2)}}, []*tensor.Dense{f64([]int{2}, 1, 1)}, []string{"empty name"}},
		{"duplicate name", []graph.NamedTensor{w(), w()}, []*tensor.Dense{f64([]int{2}, 1, 1), f64([]int{2}, 1, 1)}, []string{`"w" is listed twice`}},
		{"nil value", []graph.NamedTensor{{Name: "w"}}, []*tensor.Dense{f64([]int{2}, 1, 1)}, []string{`"w" has no value`}},
		{"int parameter", []graph.NamedTensor{{Name: "w", Value: ints}}, []*tensor.Dense{ints}, []string{`"w" is int`}},
		{"grad dtype", []graph.NamedTensor{w()}, []*tensor.Dense{dense(tensor.Float32, []int{2}, []float64{1, 1})}, []string{`"w"`, "float32(2)", "float64(2)"}},
		{"grad shape", []graph.NamedTensor{w()}, []*tensor.Dense{f64([]int{1, 2}, 1, 1)}, []string{`"w"`, "(1, 2)"}},
		{"view parameter", []graph.NamedTensor{{Name: "v", Value: view()}}, []*tensor.Dense{f64([]int{2}, 1, 1)}, []string{`"v"`, "not contiguous"}},
		{"scalar parameter", []graph.NamedTensor{{Name: "s", Value: tensor.New(tensor.FromScalar(1.0))}}, []*tensor.Dense{tensor.New(tensor.FromScalar(1.0))}, []string{`"s"`, "scalar"}},
		{"view gradient", []graph.NamedTensor{w()}, []*tensor.Dense{view()}, []string{`gradient of "w"`, "not contiguous"}},
	}
	for _, c := range cases {
		for _, o := range []optim.Optimizer{&optim.SGD{LearningRate: 0.1}, optim.NewAdam(0.1), optim.NewAdamW(0.1)} {
			err := o.Step(c.params, c.grads)
			if err == nil {
				t.Errorf("%s %T: no error", c.name, o)
				continue
			}
			for _, s := range c.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s %T: error %q does not mention %q", c.name, o, err, s)
				}
			}
		}
	}
}

// A NaN or Inf in any gradient is reported naming the parameter and the
// element, and nothing is written: not the parameters before it, not the
// state.
func TestNonFiniteGradientLeavesEverythingUntouched(t *testing.T) {
	for _, dt := range dtypes {
		for name, newOpt := range stateful {
			for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
				p := testParams(dt)
				o := newOpt(p)
				if err := o.Step(p, testGrads(dt, 0)); err != nil {
					t.Fatal(err)
				}
				params, state := cloneParams(p), deepCopyState(o.State())
				g := testGrads(dt, 1)
				set(g[1], []float64{0.5, bad, 0.5}) // second tensor: the first would be updated if not checked first
				err := o.Step(p, g)
				if err == nil {
					t.Fatalf("%v %s: %v gradient accepted", dt, name, bad)
				}
				if !errors.Is(err, graph.ErrNonFinite) {
					t.Errorf("%v %s: error %v does not wrap graph.ErrNonFinite", dt, name, err)
				}
				for _, s := range []string{`"enc.bias"`, "element 1", "no parameter was updated"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%v %s: error %q does not mention %q", dt, name, err, s)
					}
				}
				for i := range p {
					if !equalBits(graph.Float64s(p[i].Value), graph.Float64s(params[i].Value)) {
						t.Fatalf("%v %s: %s changed", dt, name, p[i].Name)
					}
				}
				after := o.State()
				for i := range after {
					if !equalBits(graph.Float64s(after[i].Value), graph.Float64s(state[i].Value)) {
						t.Fatalf("%v %s: state %s changed", dt, name, after[i].Name)
					}
				}
			}
		}
	}
}

// An update that overflows is reported after the fact, with its own error.
func TestOverflowingUpdateIsReported(t *testing.T) {
	for _, dt := range dtypes {
		lr := 1e300
		if dt == tensor.Float32 {
			lr = 1e35
		}
		o := &optim.SGD{LearningRate: lr}
		p := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{3}, []float64{1, 1, 1})}}
		err := o.Step(p, []*tensor.Dense{dense(dt, []int{3}, []float64{0, 1e10, 1e10})})
		if !errors.Is(err, optim.ErrNonFiniteParam) || errors.Is(err, graph.ErrNonFinite) {
			t.Fatalf("%v: got %v, want ErrNonFiniteParam only", dt, err)
		}
		if !strings.Contains(err.Error(), `"w"`) || !strings.Contains(err.Error(), "element 1") {
			t.Fatalf("%v: error %q does not name the parameter and first element", dt, err)
		}
	}
}
