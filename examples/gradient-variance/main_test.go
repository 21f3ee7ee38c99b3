package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
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

// At training rate 1e10 ReLU's measurement diverges and GELU's does not
// (both the first time from the same finite initial weights, so not
// before step 2); the program still finishes. ReLU is reported with its
// phase and step and left out of sections 2 and 3, GELU measured in full,
// and the claim comparing them says why it was not checked. Twice, with
// one worker and two: the same files.
func TestDivergedActivationIsReported(t *testing.T) {
	res, dir := extest.RunTwice(t, func(dir string, first bool) ([]*actResult, error) {
		c := tiny(dir, first)
		c.LR = 1e10
		return run(c)
	})
	relu, gelu := res[0], res[1]
	if relu.Diverged == "" || relu.DivergedPhase != "train" || relu.DivergedStep < 2 || relu.DivergedStep > 40 || len(relu.Phases) != 1 {
		t.Fatalf("ReLU: diverged %q in %q at step %d with %d phases; want a divergence in train, at step 2–40, after the init phase",
			relu.Diverged, relu.DivergedPhase, relu.DivergedStep, len(relu.Phases))
	}
	if gelu.Diverged != "" || len(gelu.Phases) != 4 {
		t.Errorf("GELU: diverged %q, %d phases; want none and 4", gelu.Diverged, len(gelu.Phases))
	}
	sum := extest.CheckOutput(t, dir, "gradient-variance -window 60", "claims.csv", "momentum_gelu.png")
	if _, ok := sum.Values["accuracy.relu"]; ok || sum.Values["accuracy.gelu"] == nil {
		t.Errorf("accuracy.relu = %v, accuracy.gelu = %v; want only GELU's", sum.Values["accuracy.relu"], sum.Values["accuracy.gelu"])
	}
	if len(sum.Claims) != 7 {
		t.Errorf("%d claims, want 7", len(sum.Claims))
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"1 of 2 activations diverged", fmt.Sprintf("- ReLU: diverged in phase train at step %d: ", relu.DivergedStep),
		fmt.Sprintf("| not measured: ReLU diverged in phase train at step %d | unclear |", relu.DivergedStep), "Test accuracy after the last window (100 test images): GELU "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
