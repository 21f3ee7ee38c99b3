package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
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
	c1, c2 := tiny(t, text), tiny(t, text)
	c2.Workers = 2
	res, err := run(c1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(c2); err != nil {
		t.Fatal(err)
	}
	timing := regexp.MustCompile(`("[a-z_.]*train_seconds": |took )[0-9.e+-]+`)
	n := extest.SameFilesMasked(t, c1.Out, c2.Out, func(rel string, b []byte) []byte {
		if rel != "report.md" && rel != "summary.json" {
			return b
		}
		b = timing.ReplaceAll(b, []byte("${1}T"))
		return bytes.ReplaceAll(b, []byte("-workers\n1"), []byte("-workers\n2"))
	})
	if n < 10+5*2*5 {
		t.Errorf("compared %d files, want the report's and 5 per run", n)
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
	var claims struct {
		Claims []report.Claim `json:"claims"`
	}
	raw, _ := os.ReadFile(filepath.Join(c.Out, "summary.json"))
	if err := json.Unmarshal(raw, &claims); err != nil || len(claims.Claims) != 5 {
		t.Errorf("%d claims (%v), want 5: GELU vs ReLU, GEGLU vs GELU, ReGLU vs ReLU, GEGLU and SwiGLU vs ReGLU, GEGLU ≈ SwiGLU (no SiLU: no convergence claim, no SwiGLU vs SiLU)", len(claims.Claims), err)
	}
	for _, cl := range claims.Claims {
		if cl.Verdict != report.Unclear { // 2 seeds cannot reach p ≤ 0.05
			t.Errorf("claim %q: verdict %q with 2 seeds, want unclear", cl.Claim, cl.Verdict)
		}
	}
}

// The parameter count in the report is the graph's, and it is the GPT's
// counted by hand: tied embeddings (V·d + T·d), per block two LayerNorms
// (4d), attention (d·3d + 3d + d·d + d) and the MLP (ungated d·h + h + h·d
// + d; gated one more d·h + h), and the final LayerNorm (2d).
func TestParamsMatchTheGraph(t *testing.T) {
	const v, T, d, blocks = 50, 8, 24, 2
	counts := map[string]int{}
	c := defaults()
	c.T, c.DModel, c.Heads, c.Blocks, c.FF = T, d, 2, blocks, 96
	for name, kind := range experiment.MLPs {
		cfg := c.gpt(v, name)
		m, _, err := experiment.GPTModel(cfg, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := experiment.ParamCount(m.Graph)
		h := 96
		mlp := d*h + h + h*d + d
		if kind.Gated() {
			h = 64 // round(2·96/3)
			mlp = 2*(d*h+h) + h*d + d
		}
		if want := v*d + T*d + blocks*(4*d+d*3*d+3*d+d*d+d+mlp) + 2*d; n != want {
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
		if _, err := run(c); err == nil || !strings.Contains(err.Error(), tc.want) {
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
		if _, err := run(c); err != nil {
			t.Fatal(err)
		}
	}
	ca, _ := os.ReadFile(filepath.Join(a.Out, "curves.csv"))
	cb, _ := os.ReadFile(filepath.Join(b.Out, "curves.csv"))
	if len(ca) == 0 || !bytes.Equal(ca, cb) {
		t.Errorf("curves differ with -recompute:\n%s\nwithout:\n%s", cb, ca)
	}
}
