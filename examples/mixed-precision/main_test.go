package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/graph"
)

// tiny is a configuration that trains in about a second.
func tiny(t *testing.T) config {
	t.Helper()
	text := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(text, []byte(string([]rune(datasets.Opticks())[:30000])), 0o644); err != nil {
		t.Fatal(err)
	}
	c := defaults()
	c.Out, c.TextFile = t.TempDir(), text
	c.T, c.DModel, c.Heads, c.Blocks = 8, 16, 2, 1
	c.Batch, c.Steps, c.EvalEvery, c.Warmup, c.ValChars = 16, 20, 10, 2, 1024
	c.LR, c.Seeds, c.Workers, c.Quiet, c.Args = 1e-2, 2, 1, true, []string{"mixed-precision", "-steps", "20"}
	return c
}

// The same configuration run twice (run by run, then two at a time)
// writes the same files byte for byte, all but timing.csv (the wall
// times); both precisions
// train, the bfloat16 runs differ from the float32 ones (the setting
// takes effect) but by little, and the claim is in the report.
func TestRunTwiceWritesTheSameFiles(t *testing.T) {
	res, dir, n := extest.RunTwiceCount(t, func(dir string, first bool) (*results, error) {
		c := tiny(t)
		if c.Out = dir; !first {
			c.Workers = 2
		}
		return run(context.Background(), c)
	}, "timing.csv")
	if n < 5+9*6 {
		t.Errorf("compared %d files, want the report's 5 and 9 per run", n)
	}
	if len(res.Runs) != 6 {
		t.Fatalf("%d runs, want 3 settings × 2 seeds", len(res.Runs))
	}
	for i := 0; i < len(res.Runs); i += 3 {
		full, bf16, ctrl := res.Runs[i], res.Runs[i+1], res.Runs[i+2]
		if full.Setting != (setting{graph.Full, false}) || bf16.Setting != (setting{graph.BFloat16, false}) || ctrl.Setting != (setting{graph.Full, true}) ||
			full.Seed != bf16.Seed || full.Seed != ctrl.Seed {
			t.Fatalf("runs %d–%d: %v, %v, %v, want float32, bfloat16 and the control of one seed", i, i+2, full.Setting, bf16.Setting, ctrl.Setting)
		}
		a := full.Curve.Last("val_bpc")
		for _, run := range []*runResult{bf16, ctrl} {
			b := run.Curve.Last("val_bpc")
			if a == b {
				t.Errorf("seed %d, %v: the same final validation loss %v as float32: the setting had no effect", full.Seed, run.Setting, a)
			}
			if rel := (b - a) / a; rel > 0.05 || rel < -0.05 {
				t.Errorf("seed %d: final validation loss %v in float32, %v in %v", full.Seed, a, b, run.Setting)
			}
		}
		// The control starts one ulp away: its first evaluation (before
		// any step) is float32's to about float32 precision.
		if d := ctrl.Curve.First("val_bpc")/full.Curve.First("val_bpc") - 1; math.Abs(d) > 1e-5 {
			t.Errorf("seed %d: the control starts at %v, float32 at %v", full.Seed, ctrl.Curve.First("val_bpc"), full.Curve.First("val_bpc"))
		}
	}
	sum := extest.CheckOutput(t, dir, "mixed-precision -steps 20", "results.csv", "curves.csv", "timing.csv")
	for _, k := range []string{"bfloat16.val_change.worst", "control.val_change.worst"} {
		if w, ok := sum.Number(k); !ok || !(w > 0 && w < 0.05) {
			t.Errorf("summary %s = %v (%v)", k, w, ok)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bfloat16 autocast keeps the final validation loss", "| seed |", "[timing.csv](timing.csv)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// Flags out of range are errors naming them.
func TestCheck(t *testing.T) {
	c := tiny(t)
	c.Tolerance = 0
	if _, err := run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "-tolerance") {
		t.Errorf("-tolerance 0: %v", err)
	}
	c = tiny(t)
	c.Heads = 3
	if _, err := run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "-heads 3") {
		t.Errorf("-heads 3: %v", err)
	}
}
