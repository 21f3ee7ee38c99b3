package main

import (
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
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

// tiny is a configuration that trains in seconds, on both data sets when
// Fashion-MNIST is installed.
func tiny(t *testing.T) config {
	c := defaults()
	c.Out, c.MLPs = t.TempDir(), experiment.Strings{"gelu", "relu", "geglu"}
	c.DModel, c.Heads, c.Blocks, c.FF = 16, 2, 1, 48
	c.Batch, c.Steps, c.EvalEvery, c.Warmup, c.EvalN, c.TrainN, c.TestN, c.DPI = 32, 40, 20, 5, 100, 1024, 300, 30
	c.LR, c.Seed, c.Seeds, c.Workers, c.Quiet, c.Args = 2e-2, 1, 2, 1, true, []string{"vit-mnist", "-steps", "40"}
	return c
}

// The same configuration run twice, once run by run and once two at a
// time, writes the same files byte for byte, all but timing.csv (the wall
// times).
func TestRunTwiceWritesTheSameFiles(t *testing.T) {
	res, dir, n := extest.RunTwiceCount(t, func(dir string, first bool) (*results, error) {
		c := tiny(t)
		if c.Out = dir; !first {
			c.Workers = 2
		}
		return run(context.Background(), c)
	}, "timing.csv")
	if want := 7 + 5*len(res.Runs); n < want {
		t.Errorf("compared %d files, want at least %d", n, want)
	}
	c := tiny(t)
	c.Out = dir
	checkResults(t, c, res)
}

func checkResults(t *testing.T, c config, res *results) {
	t.Helper()
	sum := extest.CheckOutput(t, c.Out, "vit-mnist -steps 40", "curves.csv", "params.csv", "results.csv", "error.png", "claims.csv", "timing.csv")
	for _, run := range res.Runs {
		// Learning: from chance (90% error) to well below it.
		errs := run.Curve.Metric("test_error")
		if final := run.Values["final_test_error"]; math.Abs(errs[0]-0.9) > 0.1 || !(final < 0.75) {
			t.Errorf("%v seed %d: test error %v, final %v, want to start near 0.9 (chance) and end below 0.75", run.Setting, run.Seed, errs, final)
		}
	}
	g := experiment.Groups(res.Runs)[0]
	if v, _ := sum.Number("mnist-gelu.final_test_error"); v != experiment.Median(g.Value("final_test_error")) {
		t.Errorf("mnist-gelu.final_test_error = %v, want the median of %v", v, g.Value("final_test_error"))
	}
	md, _ := os.ReadFile(filepath.Join(c.Out, "report.md"))
	for _, want := range []string{"non-causal self-attention", "![Test error vs step](error.png)", "| mnist | geglu | 2 |",
		"GELU's test error is below ReLU's in a vision Transformer (MNIST)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	extest.UnclearClaims(t, c.Out, len(c.Data)) // one per data set; 2 seeds cannot reach p ≤ 0.05
}

// The model cuts each image into 7×7 patches as a loop over pixels does:
// the flat pixel index of every patch entry (nn.ViT.Patches, which its
// Forward gathers).
func TestPatches(t *testing.T) {
	const rows = 2
	g, _ := graph.New(tensor.Float64, 1)
	v, err := nn.NewViT(g, "", config{DModel: 8, Heads: 2, Blocks: 1, FF: 16}.vit("gelu"))
	if err != nil {
		t.Fatal(err)
	}
	got := v.Patches(rows)
	if len(got) != rows*tokens*patch*patch {
		t.Fatalf("%d indices, want %d", len(got), rows*tokens*patch*patch)
	}
	k := 0
	for r := range rows {
		for pr := range grid {
			for pc := range grid {
				for i := range patch {
					for j := range patch {
						want := (r*side*side + (pr*patch+i)*side + pc*patch + j)
						if got[k] != want {
							t.Fatalf("image %d, patch (%d, %d), pixel (%d, %d): %v, want %v", r, pr, pc, i, j, got[k], want)
						}
						k++
					}
				}
			}
		}
	}
}

// The parameter count in the report is the graph's, and it is the ViT's
// counted by hand: patch_embed (49·d + d), cls_token (d), pos_embed (17·d),
// the blocks (extest.BlockParams), the final LayerNorm (2d) and the head
// (10·d + 10).
func TestParamsMatchTheGraph(t *testing.T) {
	const d, blocks = 12, 2
	for name, kind := range transformer.MLPs {
		cfg := config{DModel: d, Heads: 2, Blocks: blocks, FF: 48}.vit(name)
		m, err := transformer.ViTModel(cfg, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		n, h := m.Graph.NumParams(), map[bool]int{false: 48, true: 32}[kind.Gated()] // 32 = round(2·48/3)
		want := 49*d + d + d + 17*d + blocks*extest.BlockParams(d, h, kind.Gated()) + 2*d + 10*d + 10
		if n != want || cfg.Hidden != h {
			t.Errorf("%s: the graph has %d parameters and inner width %d, want %d and %d", name, n, cfg.Hidden, want, h)
		}
	}
}

func TestBadConfigurationsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		change func(*config)
		want   string
	}{
		{func(c *config) { c.MLPs = experiment.Strings{"gelu", "swish"} }, `-mlp "swish": want a comma-separated list of distinct names from geglu, gelu`},
		{func(c *config) { c.Data = experiment.Strings{"cifar"} }, `-data "cifar": want a comma-separated list of distinct names from mnist, fashion`},
		{func(c *config) { c.Data = experiment.Strings{"mnist", "mnist"} }, `-data "mnist": want a comma-separated list of distinct`},
		{func(c *config) { c.Heads = 5 }, "-heads 5 does not divide -d-model 16"},
		{func(c *config) { c.EvalN = 0 }, "-eval-n 0: want ≥ 1"},
		{func(c *config) { c.LR = -1 }, "-lr -1"},
		{func(c *config) { c.TrainN = 10 }, "-train-n 10: fewer training images than one batch of 32"},
	} {
		c := tiny(t)
		tc.change(&c)
		if _, err := run(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

// Fashion-MNIST is in the default data sets exactly when it is installed.
func TestDefaultDataFollowsTheInstall(t *testing.T) {
	_, err := os.Stat(datasets.FashionMNISTDir)
	if got, want := len(defaults().Data), map[bool]int{true: 2, false: 1}[err == nil]; got != want {
		t.Errorf("%d default data sets (%v), want %d", got, defaults().Data, want)
	}
}

// The config's tags define the flags, and the help texts of -mlp and
// -data, constants in their tags, name every variant transformer.MLPs has
// and where Fashion-MNIST is looked for.
func TestFlagHelpFollowsTheLibrary(t *testing.T) {
	fs, c := flag.NewFlagSet("vit-mnist", flag.ContinueOnError), defaults()
	if err := experiment.BindFlags(fs, &c); err != nil {
		t.Fatal(err)
	}
	if u := fs.Lookup("mlp").Usage; !strings.HasSuffix(u, ": "+transformer.MLPNames()) {
		t.Errorf("-mlp help %q, want it to end with %q", u, transformer.MLPNames())
	}
	if u := fs.Lookup("data").Usage; !strings.Contains(u, " installed at "+datasets.FashionMNISTDir+")") {
		t.Errorf("-data help %q, want it to name %s", u, datasets.FashionMNISTDir)
	}
}

// diverge makes r a run that diverged at step at (after at−1 steps): its
// curve cut there, no final test error, as trainOne leaves such a run.
func diverge(r *runResult, at int) {
	r.Curve, r.Steps, r.Diverged = r.Curve.Before(at), at-1, fmt.Sprintf("train: step %d: loss is NaN", at)
	delete(r.Values, "final_test_error")
}

// A run that diverges is a result: the report says which run, where, and
// how many; medians and the sign test use the runs that finished, and the
// claim says when a setting has none. AdamW cannot be driven to diverge
// here (-lr is at most 100, which these models survive), so the runs of a
// tiny grid are cut as a divergence cuts them: relu's seed 1 at step 30
// (after its evaluation at step 20), gelu's both seeds at step 5 (before
// any evaluation after step 0). Writing the report twice gives the same
// files.
func TestDivergedRunsAreReported(t *testing.T) {
	c := tiny(t)
	c.Data, c.MLPs = experiment.Strings{"mnist"}, experiment.Strings{"gelu", "relu"}
	res, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var relu2 float64
	for _, r := range res.Runs {
		switch {
		case r.Setting.MLP == "gelu":
			diverge(r, 5)
		case r.Seed == 1:
			diverge(r, 30)
		default:
			relu2 = r.Values["final_test_error"]
		}
	}
	_, dir := extest.RunTwice(t, func(dir string, first bool) (*results, error) {
		c.Out = dir
		return res, writeReport(c, res)
	})
	sum := extest.CheckOutput(t, dir, "vit-mnist -steps 40", "results.csv", "claims.csv", "error.png")
	if v, _ := sum.Number("mnist-relu.final_test_error"); v != relu2 {
		t.Errorf("mnist-relu.final_test_error = %v, want seed 2's %v", v, relu2)
	}
	if v := sum.Values["mnist-gelu.final_test_error"]; v != "NaN" {
		t.Errorf("mnist-gelu.final_test_error = %v, want NaN: no run finished", v)
	}
	if g, r := sum.Values["mnist-gelu.diverged"], sum.Values["mnist-relu.diverged"]; g != 2.0 || r != 1.0 {
		t.Errorf("diverged runs: gelu %v, relu %v; want 2, 1", g, r)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"| mnist | relu | 1 | diverged at step 30 | diverged at step 30 |", "3 of 4 runs diverged",
		"- mnist, relu, seed 1: diverged at step 30: train: step 30: loss is NaN", "- mnist, gelu, seed 2: diverged at step 5: ",
		"No line for mnist-gelu: every run diverged before its first evaluation after step 0.",
		"seeds; no run of GELU finished); GELU lower in 0 of 0 seeds"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
