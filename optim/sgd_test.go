package optim_test

// SGD against a scalar reference written from the update rule, closed forms
// for a constant gradient, and the variance of the momentum buffer.

import (
	"fmt"
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

// sgdRef is torch.optim.SGD for one scalar, step by step in float64.
type sgdRef struct {
	lr, mu, damp, wd   float64
	nesterov, maximize bool
}

func (r sgdRef) run(p float64, grads []float64) (float64, float64) {
	var buf float64
	for t, g := range grads {
		if r.maximize {
			g = -g
		}
		g += r.wd * p
		if r.mu != 0 {
			if t == 0 {
				buf = g
			} else {
				buf = r.mu*buf + (1-r.damp)*g
			}
			if r.nesterov {
				g += r.mu * buf
			} else {
				g = buf
			}
		}
		p -= r.lr * g
	}
	return p, buf
}

var sgdSettings = []sgdRef{
	{lr: 0.1},
	{lr: 0.05, mu: 0.9},            // heavy ball
	{lr: 0.05, mu: 0.9, damp: 0.9}, // EMA
	{lr: 0.05, mu: 0.8, nesterov: true, wd: 0.01},
	{lr: 0.02, mu: 0.7, damp: 0.3, wd: 0.05, maximize: true},
}

func TestSGDMatchesScalarReference(t *testing.T) {
	const steps, n = 8, 37
	for _, dt := range dtypes {
		for _, r := range sgdSettings {
			t.Run(fmt.Sprintf("%v/%+v", dt, r), func(t *testing.T) {
				o := &optim.SGD{LearningRate: r.lr, Momentum: r.mu, Dampening: r.damp, WeightDecay: r.wd,
					Nesterov: r.nesterov, Maximize: r.maximize}
				p0, grads, params := stepRandom(t, o, dt, steps, n, func(int) float64 { return 1 })
				wantP, wantBuf := make([]float64, n), make([]float64, n)
				for i := range wantP {
					wantP[i], wantBuf[i] = r.run(p0[i], column(grads, i))
				}
				mustClose(t, "params", graph.Float64s(params[0].Value), wantP, tolFor(dt))
				if r.mu != 0 {
					mustClose(t, "momentum buffer", graph.Float64s(o.MomentumBuffer("w")), wantBuf, tolFor(dt))
				} else if o.MomentumBuffer("w") != nil || len(o.State()) != 0 {
					t.Fatal("momentum 0 allocated a buffer")
				}
			})
		}
	}
}

// With a constant gradient g, heavy-ball momentum (dampening 0) has
// b_t = g·(1 + μ + … + μ^(t−1)) = g·(1 − μ^t)/(1 − μ), and the parameter
// moves by lr·Σ_{k≤t} b_k = lr·g·(t − μ(1 − μ^t)/(1 − μ))/(1 − μ).
// With dampening μ (EMA) PyTorch starts b at g, so b_t = g at every step and
// p_t = p_0 − t·lr·g. Nesterov heavy-ball moves by g + μ·b_t per step.
func TestSGDConstantGradientClosedForms(t *testing.T) {
	const mu, lr, g, p0, steps = 0.9, 0.01, 0.75, 2.0, 25
	for _, dt := range dtypes {
		for _, form := range []string{"heavy-ball", "ema", "nesterov"} {
			o := &optim.SGD{LearningRate: lr, Momentum: mu}
			switch form {
			case "ema":
				o.Dampening = mu
			case "nesterov":
				o.Nesterov = true
			}
			params := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{2}, []float64{p0, p0})}}
			grads := []*tensor.Dense{dense(dt, []int{2}, []float64{g, -g})}
			for s := 1; s <= steps; s++ {
				if err := o.Step(params, grads); err != nil {
					t.Fatal(err)
				}
				ft := float64(s)
				var buf, moved float64
				switch form {
				case "heavy-ball":
					buf = g * (1 - math.Pow(mu, ft)) / (1 - mu)
					moved = lr * g * (ft - mu*(1-math.Pow(mu, ft))/(1-mu)) / (1 - mu)
				case "ema":
					buf, moved = g, ft*lr*g
				case "nesterov":
					// Σ_k (g + μ·b_k) = t·g + μ·Σ_k b_k.
					buf = g * (1 - math.Pow(mu, ft)) / (1 - mu)
					moved = lr * (ft*g + mu*g*(ft-mu*(1-math.Pow(mu, ft))/(1-mu))/(1-mu))
				}
				tl := tolFor(dt)
				mustClose(t, fmt.Sprintf("%v %s buffer at step %d", dt, form, s), graph.Float64s(o.MomentumBuffers()[0]), []float64{buf, -buf}, tl)
				mustClose(t, fmt.Sprintf("%v %s param at step %d", dt, form, s), graph.Float64s(params[0].Value), []float64{p0 - moved, p0 + moved}, tl)
			}
		}
	}
}

// For gradients that are independent N(0, σ²) from step to step, the
// buffer after t steps is a weighted sum of t gradients, so
// Var(b_t) = σ²·Σ w_k². EMA (dampening β) with PyTorch's b_1 = g_1:
// weights β^(t−1) and (1−β)β^(t−k) for k ≥ 2, so
// Var = σ²·(β^(2(t−1)) + (1−β)²(1 − β^(2(t−1)))/(1 − β²)), which tends to
// (1−β)/(1+β)·σ². Heavy ball: weights μ^(t−k), Var = σ²(1 − μ^(2t))/(1 − μ²).
// The sample variance over 2^15 independent elements has a relative
// standard error of √(2/n) ≈ 0.8%; the tolerance is 3%.
func TestSGDMomentumBufferVariance(t *testing.T) {
	const n, beta, sigma, steps = 1 << 15, 0.9, 0.5, 40
	grads := make([][]float64, steps+1)
	for s := 1; s <= steps; s++ {
		grads[s] = randn(fmt.Sprint("var", s), n, sigma)
	}
	for _, dt := range dtypes {
		for _, form := range []string{"ema", "heavy-ball"} {
			o := &optim.SGD{LearningRate: 0, Momentum: beta}
			if form == "ema" {
				o.Dampening = beta
			}
			params := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{n}, make([]float64, n))}}
			grad := tensor.New(tensor.Of(dt), tensor.WithShape(n))
			for s := 1; s <= steps; s++ {
				set(grad, grads[s])
				if err := o.Step(params, []*tensor.Dense{grad}); err != nil {
					t.Fatal(err)
				}
				if s != 1 && s != 5 && s != steps {
					continue
				}
				b := graph.Float64s(o.MomentumBuffers()[0])
				mean, sq := 0.0, 0.0
				for _, v := range b {
					mean += v
				}
				mean /= n
				for _, v := range b {
					sq += (v - mean) * (v - mean)
				}
				got := sq / (n - 1)
				ft := float64(s)
				var want float64
				if form == "ema" {
					w1 := math.Pow(beta, 2*(ft-1))
					want = sigma * sigma * (w1 + (1-beta)*(1-beta)*(1-w1)/(1-beta*beta))
				} else {
					want = sigma * sigma * (1 - math.Pow(beta, 2*ft)) / (1 - beta*beta)
				}
				if math.Abs(got/want-1) > 0.03 {
					t.Errorf("%v %s step %d: Var(buffer) %.5g, want %.5g", dt, form, s, got, want)
				}
				if form == "ema" && s == steps {
					stationary := (1 - beta) / (1 + beta) * sigma * sigma
					if math.Abs(got/stationary-1) > 0.03 {
						t.Errorf("%v EMA at step 40: Var %.5g, stationary (1−β)/(1+β)σ² = %.5g", dt, got, stationary)
					}
				}
			}
		}
	}
}

// Changing the learning rate scales the whole step: the buffer does not
// contain it (unlike gorgonia's Momentum solver).
func TestSGDLearningRateIsOutsideTheBuffer(t *testing.T) {
	for _, dt := range dtypes {
		o := &optim.SGD{LearningRate: 1, Momentum: 0.5}
		params := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{1}, []float64{0})}}
		g := []*tensor.Dense{dense(dt, []int{1}, []float64{1})}
		_ = o.Step(params, g) // b = 1, p = −1
		o.SetLR(0.25)
		if o.LR() != 0.25 {
			t.Fatalf("LR() = %v after SetLR(0.25)", o.LR())
		}
		_ = o.Step(params, g) // b = 1.5, p = −1 − 0.375
		mustClose(t, "param", graph.Float64s(params[0].Value), []float64{-1.375}, tol{})
	}
}
