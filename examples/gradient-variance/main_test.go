package main

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/train/experiment"
)

// tiny measures ReLU and GELU on an 8-unit network for a few dozen steps.
func tiny(dir string, first bool) config {
	return config{Flags: experiment.Flags{Out: dir, Seed: 2, TrainN: 500, TestN: 100, Workers: extest.Workers(first)},
		MNISTMLP: extest.TinyMLP(),
		LR:       0.05, InitSamples: 30, TrainSteps: 40, Window: 60, Blocks: 3, VarBlock: 20, UnitBatches: 5, BurnEps: 0.3,
		Args: []string{"gradient-variance", "-window", "60"}, WindowLRs: experiment.Floats{0.005, 0.0005}}
}

// TestRunTinyWritesTheReport runs the whole program twice (see tiny),
// checks the first run's files and that the second wrote the same bytes.
func TestRunTinyWritesTheReport(t *testing.T) {
	res, dir := extest.RunTwice(t, func(dir string, first bool) ([]*actResult, error) {
		return run(tiny(dir, first))
	})
	if len(res) != 2 {
		t.Fatalf("%d activations, want 2", len(res))
	}
	for _, a := range res {
		var names []string
		for _, p := range a.Phases {
			names = append(names, p.Name)
			if all := p.Grad[len(p.Grad)-1]; !(all.Var > 0) || all.Elements != 784*8+8+8*10+10 {
				t.Errorf("%v %s: gradient totals %+v", a.Act, p.Name, all)
			}
			if !(p.UnitMeanSq > 0 && p.UnitMeanSq < 2) {
				t.Errorf("%v %s: network E[f'²] = %v", a.Act, p.Name, p.UnitMeanSq)
			}
		}
		if strings.Join(names, ",") != "init,window_lr0.005,window_lr0.0005,frozen" {
			t.Errorf("%v: phases %v", a.Act, names)
		}
		if len(a.Train.Var) != 2 || !(a.Accuracy >= 0 && a.Accuracy <= 1) {
			t.Errorf("%v: %d training variance points (want 40/20 = 2), accuracy %v", a.Act, len(a.Train.Var), a.Accuracy)
		}
	}
	sum := extest.CheckOutput(t, dir, "gradient-variance -window 60", "claims.csv", "normal_derivative.csv", "momentum.csv", "gradient_variance.csv",
		"network_derivative.csv", "integrand.png", "momentum_relu.png", "momentum_gelu.png", "train_variance.png")
	// E[GELU'(X)²] = 1/3 + 2/(3√3·π) (see ops/expectation_test.go); E[ReLU'²] = 1/2.
	if v, _ := sum.Values["normal.gelu.E_d1sq"].(float64); math.Abs(v-(1.0/3+2/(3*math.Sqrt(3)*math.Pi))) > 1e-12 {
		t.Errorf("E[GELU'(X)²] = %v", v)
	}
	if v, _ := sum.Values["normal.relu.E_d1sq"].(float64); math.Abs(v-0.5) > 1e-12 {
		t.Errorf("E[ReLU'(X)²] = %v", v)
	}
	verdicts := map[string]string{}
	for _, c := range sum.Claims {
		verdicts[c.Claim] = string(c.Verdict)
	}
	if len(sum.Claims) != 7 {
		t.Errorf("%d claims, want 7", len(sum.Claims))
	}
	if v := verdicts["E[GELU'(X)²] ≈ 0.42 by numerical integration"]; v != "NOT confirmed" {
		t.Errorf("the 0.42 claim: %q", v)
	}
}

func TestBadConfig(t *testing.T) {
	c := tiny(t.TempDir(), false)
	c.Blocks = 7
	if _, err := run(c); err == nil || !strings.Contains(err.Error(), "-blocks 7") {
		t.Errorf("blocks not dividing the window: %v", err)
	}
	var acts experiment.Activations
	if err := acts.Set("gelu,swish2"); err == nil || !strings.Contains(err.Error(), "swish2") {
		t.Errorf("bad activation: %v", err)
	}
	c = tiny(t.TempDir(), false)
	c.Hidden = experiment.Ints{8, 0}
	if _, err := run(c); err == nil || !strings.Contains(err.Error(), "-hidden [8 0]") {
		t.Errorf("width 0: %v", err)
	}
}
