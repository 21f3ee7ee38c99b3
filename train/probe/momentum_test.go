package probe_test

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

func TestShadowFollowsTheRecurrence(t *testing.T) {
	const beta = 0.75
	gs := [][]float64{{1, -2}, {0.5, 4}, {-3, 0.25}, {2, 2}}
	for _, dt := range dtypes {
		ps := []graph.NamedTensor{{Name: "p", Value: dense(dt, []int{2}, []float64{7, 8})}}
		for _, f := range []probe.Form{probe.EMA, probe.HeavyBall} {
			s, err := probe.NewShadow(f, beta, ps)
			if err != nil {
				t.Fatal(err)
			}
			c := 1.0 // weight of the new gradient
			if f == probe.EMA {
				c = 1 - beta
			}
			var m []float64
			for step, g := range gs {
				if err := s.Step([]*tensor.Dense{dense(dt, []int{2}, g)}); err != nil {
					t.Fatal(err)
				}
				if step == 0 {
					m = append([]float64(nil), g...) // PyTorch: the first buffer is the gradient
				} else {
					for j := range m {
						m[j] = beta*m[j] + c*g[j]
					}
				}
				got := graph.Float64s(s.Buffers()[0])
				for j := range m {
					if math.Abs(got[j]-m[j]) > 1e-6*math.Max(1, math.Abs(m[j])) {
						t.Errorf("%v %v step %d: buffer %v, want %v", dt, f, step, got, m)
						break
					}
				}
			}
		}
		if v := graph.Float64s(ps[0].Value); v[0] != 7 || v[1] != 8 {
			t.Errorf("%v: a shadow changed the parameters: %v", dt, v)
		}
	}
}

func TestFactors(t *testing.T) {
	for _, beta := range []float64{0.5, 0.9, 0.99} {
		// Var(m)/σ² = c²·Σ_k β^(2k) for m = Σ_k c·β^k·g_{t−k}, summed
		// numerically; E[m]/μ = c·Σ_k β^k.
		for _, f := range []probe.Form{probe.EMA, probe.HeavyBall} {
			c := 1.0
			if f == probe.EMA {
				c = 1 - beta
			}
			var sv, sm, p float64 = 0, 0, 1
			for k := 0; k < 100000; k++ {
				sv += c * c * p * p
				sm += c * p
				p *= beta
			}
			if got := probe.VarFactor(f, beta); math.Abs(got-sv) > 1e-9*sv {
				t.Errorf("VarFactor(%v, %v) = %v, want %v", f, beta, got, sv)
			}
			if got := probe.MeanFactor(f, beta); math.Abs(got-sm) > 1e-9*sm {
				t.Errorf("MeanFactor(%v, %v) = %v, want %v", f, beta, got, sm)
			}
		}
		if n := probe.BurnIn(beta, 1e-4); math.Pow(beta, float64(n)) > 1e-4 || math.Pow(beta, float64(n-1)) <= 1e-4 {
			t.Errorf("BurnIn(%v, 1e-4) = %d: β^n = %v", beta, n, math.Pow(beta, float64(n)))
		}
		// WindowFactor against E[s²]/γ0 from the double sum over the
		// window's covariance matrix: E[Σ(x−x̄)²] = Σ_t γ_tt − (1/n)Σ_{s,t} γ_st.
		for _, n := range []int{2, 10, 300} {
			var diag, all float64
			for s := 0; s < n; s++ {
				for u := 0; u < n; u++ {
					rho := math.Pow(beta, math.Abs(float64(s-u)))
					all += rho
					if s == u {
						diag += rho
					}
				}
			}
			want := (diag - all/float64(n)) / float64(n-1)
			if got := probe.WindowFactor(beta, n); math.Abs(got-want) > 1e-12 {
				t.Errorf("WindowFactor(%v, %d) = %v, want %v", beta, n, got, want)
			}
		}
	}
	if probe.WindowFactor(0, 50) != 1 {
		t.Error("WindowFactor(0, n) ≠ 1: independent values need no correction")
	}
	for _, v := range []float64{probe.VarFactor(probe.EMA, 1), probe.MeanFactor(probe.Form(7), 0.5), probe.WindowFactor(0.5, 1)} {
		if !math.IsNaN(v) {
			t.Errorf("bad arguments gave %v, want NaN", v)
		}
	}
}

// TestCompareOnIIDGradients feeds both conventions independent gradients
// with known per-element means and variances and checks the measured
// buffer moments against the closed forms, within a few standard errors.
func TestCompareOnIIDGradients(t *testing.T) {
	const elems, window, blockLen = 300, 4000, 400
	mu := make([]float64, elems)
	sigma := make([]float64, elems)
	var sumVar, sumSecond float64
	for j := range mu {
		mu[j] = 0.8 * math.Sin(float64(j))
		sigma[j] = 1 + 0.5*math.Cos(3*float64(j))
		sumVar += sigma[j] * sigma[j]
		sumSecond += sigma[j]*sigma[j] + mu[j]*mu[j]
	}
	for _, dt := range dtypes {
		for _, beta := range []float64{0.9, 0.99} {
			ps := []graph.NamedTensor{{Name: "w", Value: tensor.New(tensor.Of(dt), tensor.WithShape(elems))}}
			burn := probe.BurnIn(beta, 1e-4)
			gm, _ := probe.NewMoments(ps, blockLen)
			shadows := map[probe.Form]*probe.Shadow{}
			bufs := map[probe.Form]*probe.Moments{}
			for _, f := range []probe.Form{probe.EMA, probe.HeavyBall} {
				shadows[f], _ = probe.NewShadow(f, beta, ps)
				bufs[f], _ = probe.NewMoments(ps, blockLen)
			}
			r := rng.New(3, "iid")
			g := tensor.New(tensor.Of(dt), tensor.WithShape(elems))
			vals := make([]float64, elems)
			for step := 0; step < burn+window; step++ {
				for j := range vals {
					vals[j] = mu[j] + sigma[j]*r.Normal()
				}
				copyInto(g, vals)
				for _, f := range []probe.Form{probe.EMA, probe.HeavyBall} {
					if err := shadows[f].Step([]*tensor.Dense{g}); err != nil {
						t.Fatal(err)
					}
					if step >= burn {
						if err := bufs[f].Add(shadows[f].Buffers()); err != nil {
							t.Fatal(err)
						}
					}
				}
				if step >= burn {
					gm.Add([]*tensor.Dense{g})
				}
			}
			for _, f := range []probe.Form{probe.EMA, probe.HeavyBall} {
				c, err := probe.Compare(gm, bufs[f], -1, f, beta)
				if err != nil {
					t.Fatal(err)
				}
				stationary := (1 - beta) / (1 + beta)
				slope := 1.0
				if f == probe.HeavyBall {
					stationary, slope = 1/(1-beta*beta), 1/(1-beta)
				}
				if c.Predicted != stationary || c.N != window {
					t.Errorf("%v %v β=%v: predicted %v, N %d", dt, f, beta, c.Predicted, c.N)
				}
				if c.RatioSE > 0.03*c.Expected || c.RatioSE <= 0 {
					t.Errorf("%v %v β=%v: standard error %v of ratio %v is implausible", dt, f, beta, c.RatioSE, c.Ratio)
				}
				if z := (c.Ratio - c.Expected) / c.RatioSE; math.Abs(z) > 4 {
					t.Errorf("%v %v β=%v: Var(m)/Var(g) = %.5g ± %.2g, expected %.5g (stationary %.5g): z = %.1f",
						dt, f, beta, c.Ratio, c.RatioSE, c.Expected, stationary, z)
				}
				t.Logf("%v %v β=%v: %+v", dt, f, beta, c)
				if math.Abs(c.GradVar/sumVar-1) > 0.02 {
					t.Errorf("%v β=%v: Σ Var(g) = %v, population %v", dt, beta, c.GradVar, sumVar)
				}
				// The EMA factor applied to E[g²] instead of σ² is off by
				// Σσ²/Σ(σ²+μ²) for EMA, and by far more for heavy ball.
				wantDoc := c.Expected * sumVar / ((1 - beta) / (1 + beta) * sumSecond)
				if math.Abs(c.SecondMomentRatio/wantDoc-1) > 0.05 {
					t.Errorf("%v %v β=%v: second-moment ratio %v, want about %v", dt, f, beta, c.SecondMomentRatio, wantDoc)
				}
				if math.Abs(c.MeanSlope/slope-1) > 0.02 {
					t.Errorf("%v %v β=%v: mean slope %v, want %v", dt, f, beta, c.MeanSlope, slope)
				}
				if math.Abs(c.GradLag1) > 0.01 || math.Abs(c.BufLag1-beta) > 0.01 {
					t.Errorf("%v %v β=%v: lag-1 autocorrelation of g %v (want 0), of m %v (want β)", dt, f, beta, c.GradLag1, c.BufLag1)
				}
			}
		}
	}
}

func TestCompareAndShadowRejectBadInput(t *testing.T) {
	ps := []graph.NamedTensor{{Name: "w", Value: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(3))}}
	for _, tc := range []struct {
		f    probe.Form
		beta float64
		want string
	}{{probe.EMA, 1, "β = 1"}, {probe.HeavyBall, -0.1, "β = -0.1"}, {probe.Form(9), 0.9, "unknown momentum form"}, {probe.EMA, 0, "keeps no buffer"}} {
		if _, err := probe.NewShadow(tc.f, tc.beta, ps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewShadow(%v, %v): %v, want an error mentioning %q", tc.f, tc.beta, err, tc.want)
		}
	}
	a, _ := probe.NewMoments(ps, 0)
	b, _ := probe.NewMoments(ps, 0)
	one := []*tensor.Dense{dense(tensor.Float64, []int{3}, []float64{1, 2, 3})}
	a.Add(one)
	a.Add(one)
	b.Add(one)
	if _, err := probe.Compare(a, b, -1, probe.EMA, 0.9); err == nil || !strings.Contains(err.Error(), "2 observations") {
		t.Errorf("mismatched moments: %v", err)
	}
	s, _ := probe.NewShadow(probe.EMA, 0.9, ps)
	if err := s.Step([]*tensor.Dense{dense(tensor.Float64, []int{3}, []float64{0, math.NaN(), 0})}); err == nil || !strings.Contains(err.Error(), "probe.Shadow ema") {
		t.Errorf("NaN gradient: %v", err)
	}
}

// TestWatchSkipsTheBurnIn checks Watch against Shadow and Moments driven
// by hand on the same stream.
func TestWatchSkipsTheBurnIn(t *testing.T) {
	const burn, steps = 7, 40
	for _, dt := range dtypes {
		ps := []graph.NamedTensor{{Name: "a", Value: tensor.New(tensor.Of(dt), tensor.WithShape(3))}, {Name: "b", Value: tensor.New(tensor.Of(dt), tensor.WithShape(2, 2))}}
		w, err := probe.NewWatch(ps, 10, burn, probe.Buffer{Form: probe.EMA, Beta: 0.8}, probe.Buffer{Form: probe.HeavyBall, Beta: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		sh, _ := probe.NewShadow(probe.HeavyBall, 0.5, ps)
		gm, _ := probe.NewMoments(ps, 10)
		bm, _ := probe.NewMoments(ps, 10)
		r := rng.New(5, "watch")
		for s := 0; s < steps; s++ {
			gs := []*tensor.Dense{dense(dt, []int{3}, []float64{r.Normal(), r.Normal(), 1 + r.Normal()}),
				dense(dt, []int{2, 2}, []float64{r.Normal(), 2, r.Normal(), -r.Normal()})}
			rec, err := w.Add(gs)
			if err != nil {
				t.Fatal(err)
			}
			if rec != (s >= burn) {
				t.Fatalf("%v step %d: recorded = %v with burn-in %d", dt, s, rec, burn)
			}
			sh.Step(gs)
			if s >= burn {
				gm.Add(gs)
				bm.Add(sh.Buffers())
			}
		}
		if w.Steps() != steps || w.Grads().N() != steps-burn || w.BufferMoments(1).N() != steps-burn {
			t.Errorf("%v: %d steps, %d and %d recorded", dt, w.Steps(), w.Grads().N(), w.BufferMoments(1).N())
		}
		got, err := w.Compare(1, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := probe.Compare(gm, bm, 0, probe.HeavyBall, 0.5)
		if got.Ratio != want.Ratio || got.MeanSlope != want.MeanSlope || len(got.Blocks) != 4 || got.Blocks[3] != want.Blocks[3] {
			t.Errorf("%v: watch %+v, by hand %+v", dt, got, want)
		}
		if _, err := w.Compare(2, -1); err == nil {
			t.Errorf("buffer 2 of 2 accepted")
		}
	}
	if _, err := probe.NewWatch(nil, 0, 0); err == nil {
		t.Error("no parameters accepted")
	}
}
