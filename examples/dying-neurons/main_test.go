package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
)

// tiny is the whole program at a tiny size: 2 activations × 1 lr × 2 bias inits,
// with 1 and then 2 workers when run twice (extest.Workers).
func tiny(dir string, first bool) config {
	return config{Flags: experiment.Flags{Out: dir, Seed: 3, TestN: 100, TrainN: 1200, Workers: extest.Workers(first)},
		MNISTMLP: extest.TinyMLP(),
		LRs:      experiment.Floats{0.1}, Biases: experiment.Inits{"default", "-100"}, Steps: 20, NeuronSteps: 40,
		ProbeEvery: 10, ProbeN: 50, Tol: 1e-3,
		Args: []string{"dying-neurons", "-steps", "20"}}
}

// TestRunTinyWritesTheReport runs the whole program twice (see tiny),
// checks the first run's files and that the second wrote the same bytes.
func TestRunTinyWritesTheReport(t *testing.T) {
	runs, dir := extest.RunTwice(t, func(dir string, first bool) ([]*runResult, error) {
		return run(context.Background(), tiny(dir, first))
	})
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 2 activations × 1 lr × 2 bias inits", len(runs))
	}
	for _, r := range runs {
		if steps := r.Curve.Steps; len(steps) != 3 || steps[2] != 20 {
			t.Errorf("%v: probes at %v, want 0, 10, 20", r.Name, steps)
		}
		// Bias −100: every pre-activation is below −100 + 28 (|w| ≤ 1/28,
		// pixels in [0, 1]), where ReLU' and GELU' are exactly 0 in float64.
		dead, exact := r.Curve.Metric("dead_fraction")[0], r.Curve.Metric("dead_fraction_exact")[0]
		if r.Setting.Bias == "-100" && (exact != 1 || dead != 1) {
			t.Errorf("%v: dead at start %v (exactly %v), want 1", r.Name, dead, exact)
		}
		if r.Setting.Bias == "default" && r.Setting.Act == activation.GELU && exact != 0 {
			t.Errorf("%v: %v of GELU units exactly dead at the start", r.Name, exact)
		}
		if acc := r.Values[accuracy]; !(acc >= 0 && acc <= 1) {
			t.Errorf("%v: accuracy %v", r.Name, acc)
		}
	}
	sum := extest.CheckOutput(t, dir, "dying-neurons -steps 20", "claims.csv", "dead.csv", "runs.csv", "neuron_gradient.csv", "neuron_descent.csv",
		"neuron_descent.png", "dead_lr0.1_biasdefault.png", "dead_lr0.1_bias-100.png", "slope_lr0.1_biasdefault.png")
	if v := sum.Values["neuron.relu.float32.dL_dw"]; v != 0.0 {
		t.Errorf("summary: ReLU ∂L/∂w = %v, want 0", v)
	}
	if len(sum.Claims) != 7 {
		t.Errorf("%d claims, want the 4 single-neuron claims and 3 from the sweep", len(sum.Claims))
	}
	for _, c := range sum.Claims {
		if strings.Contains(c.Claim, "non-zero for any finite z") && c.Verdict != "NOT confirmed" {
			t.Errorf("GELU' has a root at −0.7518, but the claim was %q", c.Verdict)
		}
	}
}

func TestBadFlags(t *testing.T) {
	var acts experiment.Activations
	if err := acts.Set("relu,tanh"); err == nil || !strings.Contains(err.Error(), "unknown activation") {
		t.Errorf("-acts relu,tanh: %v, want an error naming the unknown activation", err)
	}
	for _, tc := range []struct {
		change func(*config)
		want   string
	}{
		{func(c *config) { c.LRs = experiment.Floats{0.1, -1} }, "-lrs [0.1 -1]: want every value > 0"},
		{func(c *config) { c.Hidden = experiment.Ints{8, 0} }, "-hidden [8 0]: want every value > 0"},
		{func(c *config) { c.Tol = 1 }, "-tol 1: want < 1"},
		{func(c *config) { c.Workers = 0 }, "-workers 0: want ≥ 1"},
		{func(c *config) { c.Biases = experiment.Inits{"minus one"} }, `"minus one"`},
	} {
		c := tiny(t.TempDir(), false)
		tc.change(&c)
		if _, err := run(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want an error mentioning %s", err, tc.want)
		}
	}
}

// TestToleranceZero runs -tol 0, allowed by the flag's check: a unit is
// then dead only where f' is exactly 0. The slope plot is on a log axis,
// which has no place for a line at 0, so it is drawn without the
// tolerance line and the caption does not mention one (this used to fail
// the whole run after training).
func TestToleranceZero(t *testing.T) {
	c := tiny(t.TempDir(), false)
	c.Tol, c.Biases = 0, experiment.Inits{"default"}
	runs, err := run(context.Background(), c)
	if err != nil {
		t.Fatalf("-tol 0: %v", err)
	}
	for _, r := range runs {
		dead, exact := r.Curve.Metric("dead_fraction"), r.Curve.Metric("dead_fraction_exact")
		for i := range dead {
			if dead[i] != exact[i] {
				t.Errorf("%v probe %d: dead at tol 0 %v ≠ exactly dead %v", r.Name, i, dead[i], exact[i])
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(c.Out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "grey line is the tolerance") {
		t.Errorf("report.md describes a tolerance line that the -tol 0 plot does not have")
	}
}
