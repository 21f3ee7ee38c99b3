package optim_test

// Adam and AdamW against a scalar reference written from the algorithm as
// PyTorch documents it (bias-corrected moments m̂, v̂), and closed forms for
// a constant gradient.

import (
	"fmt"
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

type adamRef struct {
	lr, b1, b2, eps, wd          float64
	decoupled, amsgrad, maximize bool
}

// run is one scalar through the steps. AMSGrad keeps the maximum of the raw
// second moment and bias-corrects it with the current step, as PyTorch
// 1.13's code does (its documentation shows the maximum of v̂ instead).
func (r adamRef) run(p float64, grads []float64) (pOut, m, v float64) {
	vmax := 0.0
	for i, g := range grads {
		t := float64(i + 1)
		if r.maximize {
			g = -g
		}
		if r.decoupled {
			p -= r.lr * r.wd * p
		} else {
			g += r.wd * p
		}
		m = r.b1*m + (1-r.b1)*g
		v = r.b2*v + (1-r.b2)*g*g
		vmax = math.Max(vmax, v)
		mhat := m / (1 - math.Pow(r.b1, t))
		vv := v
		if r.amsgrad {
			vv = vmax
		}
		vhat := vv / (1 - math.Pow(r.b2, t))
		p -= r.lr * mhat / (math.Sqrt(vhat) + r.eps)
	}
	return p, m, v
}

func (r adamRef) optimizer() optim.Optimizer {
	return newAdam(r.decoupled, func(a *optim.Adam) {
		a.LearningRate, a.Beta1, a.Beta2, a.Eps, a.WeightDecay, a.AMSGrad, a.Maximize = r.lr, r.b1, r.b2, r.eps, r.wd, r.amsgrad, r.maximize
	})
}

// newAdam returns NewAdamW (decoupled) or NewAdam with set applied.
func newAdam(decoupled bool, set func(a *optim.Adam)) *optim.Adam {
	a := optim.NewAdam(0)
	if decoupled {
		a = optim.NewAdamW(0)
	}
	set(a)
	return a
}

var adamSettings = []adamRef{
	{lr: 1e-2, b1: 0.9, b2: 0.999, eps: 1e-8},
	{lr: 3e-2, b1: 0.8, b2: 0.99, eps: 1e-6, wd: 0.1},
	{lr: 1e-2, b1: 0.9, b2: 0.999, eps: 1e-8, wd: 0.01, amsgrad: true, maximize: true},
	{lr: 1e-2, b1: 0.9, b2: 0.999, eps: 1e-8, wd: 0.01, decoupled: true},
	{lr: 3e-2, b1: 0.85, b2: 0.95, eps: 1e-5, wd: 0.5, decoupled: true, amsgrad: true},
}

func TestAdamMatchesScalarReference(t *testing.T) {
	const steps, n = 8, 41
	for _, dt := range dtypes {
		for _, r := range adamSettings {
			t.Run(fmt.Sprintf("%v/%+v", dt, r), func(t *testing.T) {
				o := r.optimizer()
				// Shrinking gradients make v fall behind its maximum (AMSGrad).
				p0, grads, params := stepRandom(t, o, dt, steps, n, func(s int) float64 { return math.Pow(0.5, float64(s)) })
				wantP, wantM, wantV := make([]float64, n), make([]float64, n), make([]float64, n)
				for i := range wantP {
					wantP[i], wantM[i], wantV[i] = r.run(p0[i], column(grads, i))
				}
				mustClose(t, "params", graph.Float64s(params[0].Value), wantP, tolFor(dt))
				st := map[string]*tensor.Dense{}
				for _, nt := range o.State() {
					st[nt.Name] = nt.Value
				}
				mustClose(t, "exp_avg", graph.Float64s(st["w.exp_avg"]), wantM, tolFor(dt))
				mustClose(t, "exp_avg_sq", graph.Float64s(st["w.exp_avg_sq"]), wantV, tol{abs: 1e-12, rel: tolFor(dt).rel})
				if got := graph.Float64s(st["w.step"]); len(got) != 1 || got[0] != steps {
					t.Fatalf("step = %v, want [%d]", got, steps)
				}
				if _, ok := st["w.max_exp_avg_sq"]; ok != r.amsgrad {
					t.Fatalf("max_exp_avg_sq present = %v with AMSGrad %v", ok, r.amsgrad)
				}
			})
		}
	}
}

// With a constant gradient g (no weight decay), m_t = g(1 − β1^t) and
// v_t = g²(1 − β2^t), so each Adam step moves p by lr·g/(|g| + eps): after t
// steps p = p0 − t·lr·g/(|g| + eps), whatever the betas. AdamW multiplies p
// by a = 1 − lr·λ first, so p_t = a^t·p0 − c(1 − a^t)/(1 − a) with
// c = lr·g/(|g| + eps).
func TestAdamConstantGradientClosedForms(t *testing.T) {
	const lr, eps, wd, p0, steps = 0.01, 1e-3, 0.2, 1.5, 30
	gs := []float64{0.5, -2, 0, 1e-3}
	for _, dt := range dtypes {
		for _, decoupled := range []bool{false, true} {
			o := newAdam(decoupled, func(a *optim.Adam) {
				a.LearningRate, a.Eps = lr, eps
				if decoupled {
					a.WeightDecay = wd
				}
			})
			params := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{len(gs)}, []float64{p0, p0, p0, p0})}}
			grads := []*tensor.Dense{dense(dt, []int{len(gs)}, gs)}
			for s := 1; s <= steps; s++ {
				if err := o.Step(params, grads); err != nil {
					t.Fatal(err)
				}
			}
			want := make([]float64, len(gs))
			for i, g := range gs {
				c := lr * g / (math.Abs(g) + eps)
				if decoupled {
					a := 1 - lr*wd
					at := math.Pow(a, steps)
					want[i] = at*p0 - c*(1-at)/(1-a)
				} else {
					want[i] = p0 - steps*c
				}
			}
			mustClose(t, fmt.Sprintf("%v decoupled=%v", dt, decoupled), graph.Float64s(params[0].Value), want, tolFor(dt))
		}
	}
}

// Each parameter counts its own steps, as in PyTorch: one that first gets a
// gradient later starts its bias correction at t = 1.
func TestAdamStepCountsArePerParameter(t *testing.T) {
	for _, dt := range dtypes {
		o := optim.NewAdam(0.1)
		params := []graph.NamedTensor{
			{Name: "a", Value: dense(dt, []int{1}, []float64{1})},
			{Name: "b", Value: dense(dt, []int{1}, []float64{1})},
		}
		g := dense(dt, []int{1}, []float64{3})
		for s := 0; s < 3; s++ {
			if err := o.Step(params, []*tensor.Dense{g, nil}); err != nil {
				t.Fatal(err)
			}
		}
		if got := graph.Float64s(params[1].Value); got[0] != 1 {
			t.Fatalf("parameter without gradient moved to %v", got[0])
		}
		if err := o.Step(params, []*tensor.Dense{g, g}); err != nil {
			t.Fatal(err)
		}
		if o.Steps("a") != 4 || o.Steps("b") != 1 {
			t.Fatalf("steps a=%d b=%d, want 4 and 1", o.Steps("a"), o.Steps("b"))
		}
		// First step of b: m̂ = g, v̂ = g², so b moves by lr·g/(|g|+eps).
		mustClose(t, "b after its first step", graph.Float64s(params[1].Value), []float64{1 - 0.1*3/(3+1e-8)}, tolFor(dt))
	}
}
