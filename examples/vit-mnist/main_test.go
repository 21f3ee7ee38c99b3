package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
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
// time, writes the same files byte for byte; only the wall times differ,
// and those are masked before comparing.
func TestRunTwiceWritesTheSameFiles(t *testing.T) {
	c1, c2 := tiny(t), tiny(t)
	c2.Workers = 2
	res, err := run(c1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(c2); err != nil {
		t.Fatal(err)
	}
	timing := regexp.MustCompile(`("train_seconds": |took )[0-9.e+-]+`)
	n := 0
	err = filepath.WalkDir(c1.Out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(c1.Out, path)
		a, _ := os.ReadFile(path)
		b, err := os.ReadFile(filepath.Join(c2.Out, rel))
		if err != nil {
			return err
		}
		if rel == "report.md" || rel == "summary.json" {
			a, b = timing.ReplaceAll(a, []byte("${1}T")), timing.ReplaceAll(b, []byte("${1}T"))
			a = bytes.ReplaceAll(a, []byte("-workers\n1"), []byte("-workers\n2"))
		}
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of the same configuration (or is empty)", rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 7 + 5*len(res.Runs); n < want {
		t.Errorf("compared %d files, want at least %d", n, want)
	}
	checkResults(t, c1, res)
}

func checkResults(t *testing.T, c config, res *results) {
	t.Helper()
	sum, err := report.ReadSummary(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	if u := sum.Undocumented(); len(u) > 0 {
		t.Errorf("summary keys without a description: %v", u)
	}
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
	for _, want := range []string{"**The model is a stand-in.**", "![Test error vs step](error.png)", "| mnist | geglu | 2 |",
		"GELU's test error is below ReLU's in a vision Transformer (MNIST)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var claims struct {
		Claims []report.Claim `json:"claims"`
	}
	raw, _ := os.ReadFile(filepath.Join(c.Out, "summary.json"))
	if err := json.Unmarshal(raw, &claims); err != nil || len(claims.Claims) != len(c.Data) {
		t.Errorf("%d claims (%v), want one per data set", len(claims.Claims), err)
	}
	for _, cl := range claims.Claims {
		if cl.Verdict != report.Unclear { // 2 seeds cannot reach p ≤ 0.05
			t.Errorf("claim %q: verdict %q with 2 seeds, want unclear", cl.Claim, cl.Verdict)
		}
	}
}

// patches cuts each image into 7×7 patches as a loop over pixels does.
func TestPatches(t *testing.T) {
	const rows = 2
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", rows, side*side)
	p, err := patches(x)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(nil, graph.Keep(p))
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float64, rows*side*side)
	for i := range in {
		in[i] = float64(i)
	}
	m.Set(x, tensor.New(tensor.WithShape(rows, side*side), tensor.WithBacking(in)))
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	v, _ := m.Value(p)
	got := v.(tensor.Tensor).Data().([]float64)
	if s := v.Shape(); !graph.SameShape(s, tensor.Shape{rows * tokens, patch * patch}) {
		t.Fatalf("shape %v, want (%d, %d)", s, rows*tokens, patch*patch)
	}
	k := 0
	for r := range rows {
		for pr := range grid {
			for pc := range grid {
				for i := range patch {
					for j := range patch {
						want := float64(r*side*side + (pr*patch+i)*side + pc*patch + j)
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

// The parameter count in the report is the graph's.
func TestParamsMatchTheGraph(t *testing.T) {
	for name := range mlpKinds {
		mc := modelConfig{DModel: 12, Heads: 2, Blocks: 2, FF: 48, MLP: name}
		m, err := newModel(mc, 3, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range m.Graph.ParamTensors() {
			n += p.Value.Shape().TotalSize()
		}
		if n != mc.params() {
			t.Errorf("%s: the graph has %d parameters, params() says %d", name, n, mc.params())
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
		if _, err := run(c); err == nil || !strings.Contains(err.Error(), tc.want) {
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
