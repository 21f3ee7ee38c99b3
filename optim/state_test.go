package optim_test

// State and LoadState: a restored optimizer continues the trajectory bit for
// bit, the state is live, and bad state is rejected without side effects.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

// stateful are optimizer factories for the round-trip, failure, core-count
// and allocation tests, given the parameters they will step.
var stateful = map[string]func(params []graph.NamedTensor) optim.Optimizer{
	"sgd-nesterov": func([]graph.NamedTensor) optim.Optimizer {
		return &optim.SGD{LearningRate: 0.05, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-3}
	},
	"sgd-ema": func([]graph.NamedTensor) optim.Optimizer {
		return &optim.SGD{LearningRate: 0.05, Momentum: 0.9, Dampening: 0.9}
	},
	"adam": func([]graph.NamedTensor) optim.Optimizer {
		a := optim.NewAdam(0.01)
		a.AMSGrad, a.WeightDecay = true, 0.01
		return a
	},
	"adamw": func([]graph.NamedTensor) optim.Optimizer { return optim.NewAdamW(0.01) },
	"sgd-groups": func(params []graph.NamedTensor) optim.Optimizer {
		first, rest := splitNames(params)
		return &optim.SGD{LearningRate: 0.05, Momentum: 0.9, WeightDecay: 1e-3, Groups: []optim.Group{
			optim.NewGroup(first),
			optim.NewGroup(rest, optim.LRScale(2), optim.Momentum(0.5), optim.Nesterov(true), optim.WeightDecay(0)),
		}}
	},
	"adamw-groups": func(params []graph.NamedTensor) optim.Optimizer {
		first, rest := splitNames(params)
		a := optim.NewAdamW(0.01)
		a.Groups = []optim.Group{
			optim.NewGroup(first, optim.WeightDecay(0.1)),
			optim.NewGroup(rest, optim.LRScale(0.5), optim.Betas(0.8, 0.95), optim.AMSGrad(true), optim.WeightDecay(0)),
		}
		return a
	},
}

// splitNames returns the first parameter's name and the others'.
func splitNames(params []graph.NamedTensor) (first, rest []string) {
	for i, p := range params {
		if i == 0 {
			first = append(first, p.Name)
		} else {
			rest = append(rest, p.Name)
		}
	}
	return first, rest
}

func testParams(dt tensor.Dtype) []graph.NamedTensor {
	return []graph.NamedTensor{
		{Name: "enc.weight", Value: dense(dt, []int{4, 3}, randn("enc.weight", 12, 1))},
		{Name: "enc.bias", Value: dense(dt, []int{3}, randn("enc.bias", 3, 1))},
		{Name: "frozen", Value: dense(dt, []int{2}, []float64{1, 2})},
	}
}

// testGrads are the gradients of step s; "frozen" never has one.
func testGrads(dt tensor.Dtype, s int) []*tensor.Dense {
	return []*tensor.Dense{
		dense(dt, []int{4, 3}, randn(fmt.Sprint("gw", s), 12, 1)),
		dense(dt, []int{3}, randn(fmt.Sprint("gb", s), 3, 1)),
		nil,
	}
}

func deepCopyState(st []graph.NamedTensor) []graph.NamedTensor { return cloneParams(st) }

func TestStateRoundTripContinuesExactly(t *testing.T) {
	for _, dt := range dtypes {
		for name, newOpt := range stateful {
			t.Run(fmt.Sprint(dt, "/", name), func(t *testing.T) {
				pa := testParams(dt)
				a := newOpt(pa)
				for s := 0; s < 3; s++ {
					if err := a.Step(pa, testGrads(dt, s)); err != nil {
						t.Fatal(err)
					}
				}
				saved := deepCopyState(a.State())
				pb := cloneParams(pa)
				b := newOpt(pb)
				if err := b.LoadState(pb, saved); err != nil {
					t.Fatal(err)
				}
				for s := 3; s < 6; s++ {
					if err := a.Step(pa, testGrads(dt, s)); err != nil {
						t.Fatal(err)
					}
					if err := b.Step(pb, testGrads(dt, s)); err != nil {
						t.Fatal(err)
					}
				}
				for i := range pa {
					if !equalBits(graph.Float64s(pa[i].Value), graph.Float64s(pb[i].Value)) {
						t.Fatalf("%s differs after restoring: %v vs %v", pa[i].Name, graph.Float64s(pa[i].Value), graph.Float64s(pb[i].Value))
					}
				}
				sa, sb := a.State(), b.State()
				if len(sa) != len(sb) {
					t.Fatalf("state sizes %d and %d", len(sa), len(sb))
				}
				for i := range sa {
					if sa[i].Name != sb[i].Name || !equalBits(graph.Float64s(sa[i].Value), graph.Float64s(sb[i].Value)) {
						t.Fatalf("state %q differs from %q", sa[i].Name, sb[i].Name)
					}
					if strings.HasPrefix(sa[i].Name, "frozen.") {
						t.Fatalf("parameter without gradients has state %q", sa[i].Name)
					}
				}
			})
		}
	}
}

func TestStateNamesAndLiveness(t *testing.T) {
	dt := tensor.Float64
	sgd := &optim.SGD{LearningRate: 0.1, Momentum: 0.9}
	if sgd.State() != nil || sgd.MomentumBuffers() != nil || sgd.MomentumBuffer("enc.bias") != nil {
		t.Fatal("state before the first step")
	}
	p := testParams(dt)
	if err := sgd.Step(p, testGrads(dt, 0)); err != nil {
		t.Fatal(err)
	}
	st := sgd.State()
	if got := names(st); got != "enc.weight.momentum_buffer enc.bias.momentum_buffer" {
		t.Fatalf("SGD state names %q", got)
	}
	bufs := sgd.MomentumBuffers()
	if len(bufs) != 3 || bufs[0] != st[0].Value || bufs[1] != sgd.MomentumBuffer("enc.bias") || bufs[2] != nil {
		t.Fatalf("MomentumBuffers %v do not line up with the parameters and State", bufs)
	}
	// Live: the buffer State returned is the one the next step updates.
	before := graph.Float64s(st[0].Value)
	if err := sgd.Step(p, testGrads(dt, 1)); err != nil {
		t.Fatal(err)
	}
	if equalBits(before, graph.Float64s(st[0].Value)) {
		t.Fatal("State returned a copy, not the live buffer")
	}

	adam := optim.NewAdam(0.1)
	adam.AMSGrad = true
	if err := adam.Step(p, testGrads(dt, 0)); err != nil {
		t.Fatal(err)
	}
	want := "enc.weight.step enc.weight.exp_avg enc.weight.exp_avg_sq enc.weight.max_exp_avg_sq " +
		"enc.bias.step enc.bias.exp_avg enc.bias.exp_avg_sq enc.bias.max_exp_avg_sq"
	if got := names(adam.State()); got != want {
		t.Fatalf("Adam state names\n%q, want\n%q", got, want)
	}
	if adam.ExpAvg("enc.bias") != adam.State()[5].Value || adam.ExpAvgSq("frozen") != nil || adam.Steps("enc.bias") != 1 {
		t.Fatal("typed accessors disagree with State")
	}
}

func names(st []graph.NamedTensor) string {
	var s []string
	for _, nt := range st {
		s = append(s, nt.Name)
	}
	return strings.Join(s, " ")
}

// LoadState copies: changing the source afterwards does not reach the
// optimizer.
func TestLoadStateCopies(t *testing.T) {
	dt := tensor.Float32
	p := testParams(dt)
	src := []graph.NamedTensor{{Name: "enc.bias.momentum_buffer", Value: dense(dt, []int{3}, []float64{1, 2, 3})}}
	o := &optim.SGD{LearningRate: 0.1, Momentum: 0.5}
	if err := o.LoadState(p, src); err != nil {
		t.Fatal(err)
	}
	set(src[0].Value, []float64{9, 9, 9})
	if got := graph.Float64s(o.MomentumBuffer("enc.bias")); !equalBits(got, []float64{1, 2, 3}) {
		t.Fatalf("buffer %v follows the source tensor", got)
	}
	if o.MomentumBuffer("enc.weight") != nil {
		t.Fatal("parameter absent from the state got a buffer")
	}
}

func TestLoadStateErrors(t *testing.T) {
	dt := tensor.Float64
	p := testParams(dt)
	adamState := func() []graph.NamedTensor {
		a := optim.NewAdam(0.1)
		if err := a.Step(p[:2], testGrads(dt, 0)[:2]); err != nil {
			t.Fatal(err)
		}
		return deepCopyState(a.State())
	}
	without := func(st []graph.NamedTensor, name string) []graph.NamedTensor {
		var out []graph.NamedTensor
		for _, nt := range st {
			if nt.Name != name {
				out = append(out, nt)
			}
		}
		return out
	}
	replace := func(st []graph.NamedTensor, name string, v *tensor.Dense) []graph.NamedTensor {
		out := without(st, name)
		return append(out, graph.NamedTensor{Name: name, Value: v})
	}
	nan := dense(dt, []int{3}, []float64{0, 0, 0})
	nan.Float64s()[1] = nanValue()
	cases := []struct {
		name  string
		state []graph.NamedTensor
		amsg  bool
		want  []string
	}{
		{"missing key", without(adamState(), "enc.bias.exp_avg_sq"), false, []string{`"enc.bias"`, "enc.bias.exp_avg_sq", "missing"}},
		{"missing amsgrad key", adamState(), true, []string{"enc.weight.max_exp_avg_sq", "missing"}},
		{"extra name", append(adamState(), graph.NamedTensor{Name: "dec.weight.exp_avg", Value: dense(dt, []int{1}, []float64{0})}), false, []string{`"dec.weight.exp_avg"`, "matches no parameter"}},
		{"sgd key in adam", append(adamState(), graph.NamedTensor{Name: "enc.bias.momentum_buffer", Value: tensor.New(tensor.Of(dt), tensor.WithShape(3))}), false, []string{"enc.bias.momentum_buffer"}},
		{"shape", replace(adamState(), "enc.bias.exp_avg", tensor.New(tensor.Of(dt), tensor.WithShape(4))), false, []string{"enc.bias.exp_avg", "(4)", "(3)"}},
		{"dtype", replace(adamState(), "enc.bias.exp_avg", tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(3))), false, []string{"float32", "float64"}},
		{"step dtype", replace(adamState(), "enc.bias.step", dense(tensor.Float32, []int{1}, []float64{1})), false, []string{"enc.bias.step", "float64(1)"}},
		{"step fraction", replace(adamState(), "enc.bias.step", dense(dt, []int{1}, []float64{1.5})), false, []string{"1.5", "whole number"}},
		{"step negative", replace(adamState(), "enc.bias.step", dense(dt, []int{1}, []float64{-1})), false, []string{"-1"}},
		{"nan", replace(adamState(), "enc.bias.exp_avg", nan), false, []string{"enc.bias.exp_avg", "element 1", "NaN"}},
		{"negative second moment", replace(adamState(), "enc.bias.exp_avg_sq", dense(dt, []int{3}, []float64{1, -1, 1})), false, []string{"exp_avg_sq", "element 1", "≥ 0"}},
		{"duplicate", append(adamState(), adamState()[0]), false, []string{"listed twice"}},
		{"nil value", replace(adamState(), "enc.bias.exp_avg", nil), false, []string{"no value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := optim.NewAdam(0.1)
			o.AMSGrad = c.amsg
			// Give o some state first: a failed load must leave it as it was.
			if err := o.Step(p[:1], testGrads(dt, 5)[:1]); err != nil {
				t.Fatal(err)
			}
			before := deepCopyState(o.State())
			err := o.LoadState(p, c.state)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			after := o.State()
			if names(after) != names(before) {
				t.Fatalf("failed load changed the state: %s → %s", names(before), names(after))
			}
			for i := range after {
				if !equalBits(graph.Float64s(after[i].Value), graph.Float64s(before[i].Value)) {
					t.Fatalf("failed load changed %s", after[i].Name)
				}
			}
		})
	}
}

// A parameter whose shape changed since its state was made is an error at
// Step, before anything is written.
func TestStepRejectsStateOfAnotherShape(t *testing.T) {
	for _, dt := range dtypes {
		o := &optim.SGD{LearningRate: 0.1, Momentum: 0.9}
		p := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{3}, []float64{1, 2, 3})}}
		if err := o.Step(p, []*tensor.Dense{dense(dt, []int{3}, []float64{1, 1, 1})}); err != nil {
			t.Fatal(err)
		}
		p2 := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{4}, []float64{1, 2, 3, 4})}}
		err := o.Step(p2, []*tensor.Dense{dense(dt, []int{4}, []float64{1, 1, 1, 1})})
		if err == nil || !strings.Contains(err.Error(), `"w"`) || !strings.Contains(err.Error(), "state") {
			t.Fatalf("got %v", err)
		}
		if got := graph.Float64s(p2[0].Value); !equalBits(got, []float64{1, 2, 3, 4}) {
			t.Fatalf("parameter changed to %v", got)
		}
	}
}
