package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/train/experiment"
)

// tiny is a configuration that trains in about a second.
func tiny(t *testing.T, text string) config {
	c := defaults()
	c.Out, c.TextFile, c.MLPs = t.TempDir(), text, experiment.Strings{"relu", "gelu", "geglu", "swiglu", "reglu"}
	c.T, c.DModel, c.Heads, c.Blocks, c.FF = 8, 16, 2, 2, 48
	c.Batch, c.Steps, c.EvalEvery, c.Warmup, c.ValWindows, c.SampleLen, c.DPI = 32, 30, 10, 5, 256, 40, 30
	c.LR, c.Seed, c.Seeds, c.Workers, c.Quiet, c.Args = 1e-2, 1, 2, 1, true, []string{"char-gpt", "-steps", "30"}
	return c
}

func tinyText(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(p, []byte(string([]rune(datasets.Opticks())[:30000])), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The same configuration run twice, once run by run and once two at a
// time, writes the same files byte for byte; only the wall times differ,
// and those are masked before comparing.
func TestRunTwiceWritesTheSameFiles(t *testing.T) {
	text := tinyText(t)
	res, dir, n := extest.RunTwiceMasked(t, func(dir string, first bool) (*results, error) {
		c := tiny(t, text)
		if c.Out = dir; !first {
			c.Workers = 2
		}
		return run(context.Background(), c)
	})
	if n < 10+5*2*5 {
		t.Errorf("compared %d files, want the report's and 5 per run", n)
	}
	c := tiny(t, text)
	c.Out = dir
	checkResults(t, c, res)
}

func checkResults(t *testing.T, c config, res *results) {
	t.Helper()
	sum := extest.CheckOutput(t, c.Out, "char-gpt -steps 30", "curves.csv", "params.csv", "results.csv", "samples.csv", "loss.png", "claims.csv")
	for _, run := range res.Runs {
		val := run.Curve.Metric("val_bpc")
		// Learning: from about log2(vocab) bits, the loss falls by a bit.
		if uniform := math.Log2(float64(res.Data.Vocab.Size())); math.Abs(val[0]-uniform) > 1.5 || !(val[len(val)-1] < val[0]-1) {
			t.Errorf("%s seed %d: validation bits/char %v, want to start near log2(vocab) = %.2f and fall by more than 1", run.Setting, run.Seed, val, uniform)
		}
		if got := len(run.Vectors["sample"]); got != c.SampleLen {
			t.Errorf("%s: %d sampled characters, want %d", run.Setting, got, c.SampleLen)
		}
	}
	g := experiment.Groups(res.Runs)[1] // gelu
	if v, _ := sum.Number("gelu.final_val_bpc"); v != experiment.Median(g.Final("val_bpc")) {
		t.Errorf("gelu.final_val_bpc = %v, want the median of %v", v, g.Final("val_bpc"))
	}
	md, _ := os.ReadFile(filepath.Join(c.Out, "report.md"))
	for _, want := range []string{"causal self-attention", "![Validation loss vs step](loss.png)", "**swiglu**", "| reglu | 1 |",
		"GEGLU and SwiGLU both have lower held-out loss than ReGLU", "GEGLU ≈ SwiGLU", "GELU consistently outperforms ReLU"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// GELU vs ReLU, GEGLU vs GELU, ReGLU vs ReLU, GEGLU and SwiGLU vs ReGLU,
	// GEGLU ≈ SwiGLU (no SiLU: no convergence claim, no SwiGLU vs SiLU); 2
	// seeds cannot reach p ≤ 0.05.
	extest.UnclearClaims(t, c.Out, 5)
}

// The parameter count in the report is the graph's, and it is the GPT's
// counted by hand: tied embeddings (V·d + T·d), the blocks
// (extest.BlockParams) and the final LayerNorm (2d).
func TestParamsMatchTheGraph(t *testing.T) {
	const v, T, d, blocks = 50, 8, 24, 2
	counts := map[string]int{}
	c := defaults()
	c.T, c.DModel, c.Heads, c.Blocks, c.FF = T, d, 2, blocks, 96
	for name, kind := range transformer.MLPs {
		cfg := c.gpt(v, name)
		m, _, err := transformer.GPTModel(cfg, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		n, h := m.Graph.NumParams(), map[bool]int{false: 96, true: 64}[kind.Gated()] // 64 = round(2·96/3)
		if want := v*d + T*d + blocks*extest.BlockParams(d, h, kind.Gated()) + 2*d; n != want {
			t.Errorf("%s: the graph has %d parameters, want %d", name, n, want)
		}
		if cfg.Hidden != h {
			t.Errorf("%s: inner width %d, want %d", name, cfg.Hidden, h)
		}
		counts[name] = n
	}
	// Gated and ungated differ by the biases only: per block 2·64 − 96.
	if diff := counts["geglu"] - counts["gelu"]; diff != blocks*(2*64-96) {
		t.Errorf("geglu − gelu = %d parameters, want 2 blocks × (128 − 96 biases) = 64", diff)
	}
}

func TestBadConfigurationsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		change func(*config)
		want   string
	}{
		{func(c *config) { c.MLPs = experiment.Strings{"gelu", "swish_glu"} }, `-mlp "swish_glu": want a comma-separated list of distinct names from geglu, gelu`},
		{func(c *config) { c.MLPs = nil }, "-mlp is empty"},
		{func(c *config) { c.MLPs = experiment.Strings{"gelu", "gelu"} }, `-mlp "gelu": want a comma-separated list of distinct`},
		{func(c *config) { c.Heads = 5 }, "-heads 5 does not divide -d-model 16"},
		{func(c *config) { c.Steps = 0 }, "-steps 0: want ≥ 1"},
		{func(c *config) { c.LR = math.NaN() }, "-lr NaN"},
		{func(c *config) { c.T = 50000 }, "-T 50000: datasets.CharTask: context 50000 and chunk length 4096"},
		{func(c *config) { c.T = 4095 }, "use a longer text or smaller -batch, -T"},
	} {
		c := tiny(t, tinyText(t))
		tc.change(&c)
		if _, err := run(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

// -recompute changes memory and time, not results: the curves of a gated
// and an ungated MLP are the same bytes with and without it.
func TestRecomputeGivesTheSameCurves(t *testing.T) {
	text := tinyText(t)
	a, b := tiny(t, text), tiny(t, text)
	a.MLPs, b.MLPs, a.Seeds, b.Seeds, a.Steps, b.Steps, b.Recompute = experiment.Strings{"gelu", "swiglu"}, experiment.Strings{"gelu", "swiglu"}, 1, 1, 10, 10, true
	for _, c := range []config{a, b} {
		if _, err := run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	ca, _ := os.ReadFile(filepath.Join(a.Out, "curves.csv"))
	cb, _ := os.ReadFile(filepath.Join(b.Out, "curves.csv"))
	if len(ca) == 0 || !bytes.Equal(ca, cb) {
		t.Errorf("curves differ with -recompute:\n%s\nwithout:\n%s", cb, ca)
	}
}

// The config's tags define the flags, and -mlp's help, a constant in its
// tag, lists every variant transformer.MLPs has.
func TestMLPFlagListsEveryVariant(t *testing.T) {
	fs, c := flag.NewFlagSet("char-gpt", flag.ContinueOnError), defaults()
	if err := experiment.BindFlags(fs, &c); err != nil {
		t.Fatal(err)
	}
	if u := fs.Lookup("mlp").Usage; !strings.HasSuffix(u, ": "+transformer.MLPNames()) {
		t.Errorf("-mlp help %q, want it to end with %q", u, transformer.MLPNames())
	}
}

// diverge makes r a run that diverged at step at (after at−1 steps): its
// curve cut there, no sample, as trainOne leaves such a run.
func diverge(r *runResult, at int) {
	r.Curve, r.Steps, r.Diverged = r.Curve.Before(at), at-1, fmt.Sprintf("train: step %d: loss is NaN", at)
	delete(r.Vectors, "sample")
}

// A run that diverges is a result: the report says which run, where, and
// how many; medians and sign tests use the runs that finished, and a
// claim whose setting has none says so. AdamW cannot be driven to
// diverge here (-lr is at most 100, which these models survive), so the
// runs of a tiny grid are cut as a divergence cuts them: relu's seed 1
// at step 15 (after its evaluation at step 10), gelu's both seeds at step
// 5 (before any evaluation after step 0). Writing the report twice gives
// the same files.
func TestDivergedRunsAreReported(t *testing.T) {
	c := tiny(t, tinyText(t))
	c.MLPs = experiment.Strings{"relu", "gelu"}
	res, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]float64{}
	for _, r := range res.Runs { // seed 1 relu, gelu; seed 2 relu, gelu
		keep[fmt.Sprint(r.Name, r.Seed)] = r.Curve.Last("val_bpc")
		switch {
		case r.Name == "gelu":
			diverge(r, 5)
		case r.Seed == 1:
			diverge(r, 15)
		}
	}
	_, dir, _ := extest.RunTwiceMasked(t, func(dir string, first bool) (*results, error) {
		c.Out = dir
		return res, writeReport(c, res)
	})
	sum := extest.CheckOutput(t, dir, "char-gpt -steps 30", "results.csv", "samples.csv", "claims.csv", "loss.png")
	// relu's median is its one finished seed's; gelu has none.
	if v, _ := sum.Number("relu.final_val_bpc"); v != keep["relu2"] {
		t.Errorf("relu.final_val_bpc = %v, want seed 2's %v", v, keep["relu2"])
	}
	if v := sum.Values["gelu.final_val_bpc"]; v != "NaN" {
		t.Errorf("gelu.final_val_bpc = %v, want NaN: no run finished", v)
	}
	if g, r := sum.Values["gelu.diverged"], sum.Values["relu.diverged"]; g != 2.0 || r != 1.0 {
		t.Errorf("diverged runs: gelu %v, relu %v; want 2, 1", g, r)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"| relu | 1 | ", " | diverged at step 15 | diverged at step 15 | diverged at step 15 |", "3 of 4 runs diverged",
		"- relu, seed 1: diverged at step 15: train: step 15: loss is NaN", "- gelu, seed 2: diverged at step 5: ",
		"(no sample: the run diverged at step 5)", "No line for gelu: every run diverged before its first evaluation after step 0.",
		"(medians; no run of gelu finished), gelu lower in 0 of 0 seeds"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
