package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// windowExpected is E[sample variance]/variance over n steps of a series
// with autocorrelation β^k: (n − S/n)/(n − 1) with S = Σ_{s,t} β^|s−t| in
// closed form, S = n(1+β)/(1−β) − 2β(1−βⁿ)/(1−β)² (a geometric series
// summed twice; probe.WindowFactor sums it term by term).
func windowExpected(beta float64, n int) float64 {
	fn := float64(n)
	all := fn*(1+beta)/(1-beta) - 2*beta*(1-math.Pow(beta, fn))/((1-beta)*(1-beta))
	return (fn - all/fn) / (fn - 1)
}

// TestMomentumVarianceOnSyntheticIID runs the example's recorder on
// synthetic i.i.d. gradients (per-element means and spreads differ) in
// both dtypes and checks Var(m)/Var(g) against (1−β)/(1+β) and 1/(1−β²),
// corrected for the window, within 4 standard errors, and E[m] against
// μ and μ/(1−β).
func TestMomentumVarianceOnSyntheticIID(t *testing.T) {
	const elems, window, blocks = 200, 2000, 5
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		ps := []graph.NamedTensor{{Name: "w", Value: tensor.New(tensor.Of(dt), tensor.WithShape(4, elems/4))}}
		burn := probe.BurnIn(0.99, 1e-4)
		rec, err := newRecorder(ps, window/blocks, burn, combos)
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(11, "synthetic")
		g := tensor.New(tensor.Of(dt), tensor.WithShape(4, elems/4))
		for step := 0; step < burn+window; step++ {
			for j := 0; j < elems; j++ {
				v := 0.3*math.Cos(float64(j)) + (0.5+float64(j%7)/7)*r.Normal()
				if dt == tensor.Float32 {
					g.Float32s()[j] = float32(v)
				} else {
					g.Float64s()[j] = v
				}
			}
			if err := rec.add([]*tensor.Dense{g}); err != nil {
				t.Fatal(err)
			}
		}
		ph, err := rec.summarize("synthetic")
		if err != nil {
			t.Fatal(err)
		}
		if len(ph.Comps) != 4 || len(ph.Blocks[0]) != blocks {
			t.Fatalf("%d comparisons with %d blocks, want 4 with %d", len(ph.Comps), len(ph.Blocks[0]), blocks)
		}
		for _, c := range ph.Comps {
			stationary, slope := (1-c.Beta)/(1+c.Beta), 1.0
			if c.Form == probe.HeavyBall {
				stationary, slope = 1/(1-c.Beta*c.Beta), 1/(1-c.Beta)
			}
			want := stationary * windowExpected(c.Beta, window)
			if z := (c.Ratio - want) / c.RatioSE; math.Abs(z) > 4 || c.RatioSE > 0.05*want {
				t.Errorf("%v %v β=%v: Var(m)/Var(g) = %.5g ± %.2g, want %.5g: z = %.1f", dt, c.Form, c.Beta, c.Ratio, c.RatioSE, want, z)
			}
			if math.Abs(c.MeanSlope/slope-1) > 0.03 {
				t.Errorf("%v %v β=%v: E[m] slope %v, want %v", dt, c.Form, c.Beta, c.MeanSlope, slope)
			}
		}
		if !math.IsNaN(ph.MeanSqD) {
			t.Errorf("no units were recorded, but E[f'²] = %v", ph.MeanSqD)
		}
	}
}

func tiny(dir string) config {
	c := config{Out: dir, Seed: 2, Batch: 16, LR: 0.05, Momentum: 0.9, InitSamples: 30, TrainSteps: 40,
		Window: 60, Blocks: 3, VarBlock: 20, UnitBatches: 5, BurnEps: 0.3, TrainN: 500, TestN: 100, Workers: 2, DPI: 30, Quiet: true,
		Args: []string{"gradient-variance", "-window", "60"}}
	if err := parseLists(&c, "relu,gelu", "8", "0.005,0.0005"); err != nil {
		panic(err)
	}
	return c
}

// TestRunTinyWritesTheReport runs the whole program at a tiny size twice,
// with one and with two workers, checks the first run's files and that
// the second wrote the same bytes.
func TestRunTinyWritesTheReport(t *testing.T) {
	dir, dir2 := t.TempDir(), t.TempDir()
	c := tiny(dir)
	c.Workers = 1
	res, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(tiny(dir2)); err != nil {
		t.Fatal(err)
	}
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		a, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b, _ := os.ReadFile(filepath.Join(dir2, e.Name()))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with the same seed (1 and 2 workers)", e.Name())
		}
	}
	if len(res.Acts) != 2 {
		t.Fatalf("%d activations, want 2", len(res.Acts))
	}
	for _, a := range res.Acts {
		var names []string
		for _, p := range a.Phases {
			names = append(names, p.Name)
			if all := p.Grad[len(p.Grad)-1]; !(all.Var > 0) || all.Elements != 784*8+8+8*10+10 {
				t.Errorf("%v %s: gradient totals %+v", a.Act, p.Name, all)
			}
			if !(p.MeanSqD > 0 && p.MeanSqD < 2) {
				t.Errorf("%v %s: network E[f'²] = %v", a.Act, p.Name, p.MeanSqD)
			}
		}
		if strings.Join(names, ",") != "init,window_lr0.005,window_lr0.0005,frozen" {
			t.Errorf("%v: phases %v", a.Act, names)
		}
		if len(a.TrainVar) != 2 || !(a.Accuracy >= 0 && a.Accuracy <= 1) {
			t.Errorf("%v: %d training variance points (want 40/20 = 2), accuracy %v", a.Act, len(a.TrainVar), a.Accuracy)
		}
	}
	for _, f := range []string{"report.md", "summary.json", "claims.csv", "normal_derivative.csv", "momentum.csv", "gradient_variance.csv",
		"network_derivative.csv", "integrand.png", "momentum_relu.png", "momentum_gelu.png", "train_variance.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.HasPrefix(string(md), "```sh\ngradient-variance -window 60\n```\n") {
		t.Errorf("report.md does not start with the command:\n%.200s", md)
	}
	var sum struct {
		Keys   map[string]string
		Values map[string]any
		Claims []struct{ Claim, Verdict string }
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	for k := range sum.Values {
		documented := false
		for p := range sum.Keys {
			if ok, _ := path.Match(p, k); ok {
				documented = true
			}
		}
		if !documented {
			t.Errorf("summary key %s is not documented", k)
		}
	}
	// E[GELU'(X)²] = 1/3 + 2/(3√3·π) (see ops/expectation_test.go); E[ReLU'²] = 1/2.
	if v, _ := sum.Values["normal.gelu.E_d1sq"].(float64); math.Abs(v-(1.0/3+2/(3*math.Sqrt(3)*math.Pi))) > 1e-12 {
		t.Errorf("E[GELU'(X)²] = %v", v)
	}
	if v, _ := sum.Values["normal.relu.E_d1sq"].(float64); math.Abs(v-0.5) > 1e-12 {
		t.Errorf("E[ReLU'(X)²] = %v", v)
	}
	verdicts := map[string]string{}
	for _, c := range sum.Claims {
		verdicts[c.Claim] = c.Verdict
	}
	if len(sum.Claims) != 7 {
		t.Errorf("%d claims, want 7", len(sum.Claims))
	}
	if v := verdicts["E[GELU'(X)²] ≈ 0.42 by numerical integration"]; v != "NOT confirmed" {
		t.Errorf("the 0.42 claim: %q", v)
	}
}

func TestBadConfig(t *testing.T) {
	c := tiny(t.TempDir())
	c.Blocks = 7
	if _, err := run(c); err == nil || !strings.Contains(err.Error(), "-blocks 7") {
		t.Errorf("blocks not dividing the window: %v", err)
	}
	var c2 config
	if err := parseLists(&c2, "gelu,swish2", "8", "0.1"); err == nil || !strings.Contains(err.Error(), "swish2") {
		t.Errorf("bad activation: %v", err)
	}
}
