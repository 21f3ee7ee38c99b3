package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
)

// tiny is a configuration that trains in a few seconds: 5 MLPs at 2 rates
// with seed 1, then at the chosen rates with seed 2.
func tiny(t *testing.T, text string) config {
	c := defaults()
	c.Out, c.TextFile, c.MLPs = t.TempDir(), text, experiment.Strings{"relu", "gelu", "geglu", "swiglu", "reglu"}
	c.T, c.DModel, c.Heads, c.Blocks, c.FF = 8, 16, 2, 2, 48
	c.Batch, c.Steps, c.EvalEvery, c.Warmup, c.ValChars, c.SampleLen, c.DPI = 16, 30, 10, 5, 1024, 40, 30
	c.LRs, c.Seed, c.Seeds, c.Workers, c.Quiet, c.Args = experiment.Floats{1e-2, 3e-2}, 1, 2, 1, true, []string{"char-gpt", "-steps", "30"}
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
// time, writes the same files byte for byte, all but timing.csv (the wall
// times).
func TestRunTwiceWritesTheSameFiles(t *testing.T) {
	text := tinyText(t)
	res, dir, n := extest.RunTwiceCount(t, func(dir string, first bool) (*results, error) {
		c := tiny(t, text)
		if c.Out = dir; !first {
			c.Workers = 2
		}
		return run(context.Background(), c)
	}, "timing.csv")
	if n < 10+(10+5)*6 {
		t.Errorf("compared %d files, want the report's and 6 per run", n)
	}
	c := tiny(t, text)
	c.Out = dir
	checkResults(t, c, res)
}

func checkResults(t *testing.T, c config, res *results) {
	t.Helper()
	sum := extest.CheckOutput(t, c.Out, "char-gpt -steps 30", "curves.csv", "params.csv", "lr_selection.csv", "summary.csv", "results.csv",
		"samples.csv", "loss.png", "claims.csv", "timing.csv")
	if len(res.Select) != len(c.MLPs)*len(c.LRs) || len(res.Runs) != len(c.MLPs)*c.Seeds || len(res.All) != len(res.Select)+len(c.MLPs)*(c.Seeds-1) {
		t.Fatalf("%d selection runs, %d runs reported, %d in all", len(res.Select), len(res.Runs), len(res.All))
	}
	for i, m := range c.MLPs {
		// The chosen rate is the one with the lowest final validation loss
		// of seed 1, and the reported runs of that MLP are at it: the first
		// is the selection's own run, the others have the later seeds.
		var best *runResult
		for _, g := range res.Select {
			if r := g.Runs[0]; r.Setting.MLP == m && (best == nil || r.Curve.Last("val_loss") < best.Curve.Last("val_loss")) {
				best = r
			}
		}
		if res.Runs[i] != best {
			t.Errorf("%s: seed 1's reported run is %s, want the selection's best, %s", m, res.Runs[i].Name, best.Name)
		}
		if lr, _ := sum.Number(m + ".lr"); lr != best.Setting.LR {
			t.Errorf("%s.lr = %v, want %v", m, lr, best.Setting.LR)
		}
		for s := 1; s < c.Seeds; s++ {
			if r := res.Runs[s*len(c.MLPs)+i]; r.Setting != best.Setting || r.Seed != c.Seed+uint64(s) {
				t.Errorf("%s: run %s seed %d, want %s seed %d", m, r.Name, r.Seed, best.Name, c.Seed+uint64(s))
			}
		}
	}
	for _, run := range res.All {
		val := run.Curve.Metric("val_loss")
		// Learning: from about ln(vocab) nats, the loss falls by more than
		// half a nat.
		if uniform := math.Log(float64(res.Data.Vocab.Size())); math.Abs(val[0]-uniform) > 1 || !(val[len(val)-1] < val[0]-0.5) {
			t.Errorf("%s seed %d: validation loss %v, want to start near ln(vocab) = %.2f and fall by more than 0.5", run.Name, run.Seed, val, uniform)
		}
		if got := len(run.Vectors["sample"]); got != c.SampleLen {
			t.Errorf("%s: %d sampled characters, want %d", run.Name, got, c.SampleLen)
		}
	}
	g := experiment.Groups(res.Runs)[1] // gelu
	if v, _ := sum.Number("gelu.final_val_loss"); v != experiment.Median(g.Final("val_loss")) {
		t.Errorf("gelu.final_val_loss = %v, want the median of %v", v, g.Final("val_loss"))
	}
	if v, _ := sum.Number("gelu.final_val_bpc"); math.Abs(v-experiment.Median(g.Final("val_loss"))/math.Ln2) > 1e-12 {
		t.Errorf("gelu.final_val_bpc = %v, want the loss in nats / ln 2", v)
	}
	md, _ := os.ReadFile(filepath.Join(c.Out, "report.md"))
	for _, want := range []string{"pre-LN Transformer blocks of causal", "![Validation loss vs step](loss.png)", "**swiglu**", "| reglu | ",
		"beta2 = 0.99", "GEGLU and SwiGLU both have lower held-out loss than ReGLU", "GEGLU ≈ SwiGLU", "GELU consistently outperforms ReLU",
		"not nanoGPT's recipe for its baby GPT"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// GELU vs ReLU, GEGLU vs GELU, ReGLU vs ReLU, GEGLU and SwiGLU vs ReGLU,
	// GEGLU ≈ SwiGLU (no SiLU: no convergence claim, no SwiGLU vs SiLU); 2
	// seeds cannot reach p ≤ 0.05.
	extest.UnclearClaims(t, c.Out, 5)
}

// Validation is the mean cross-entropy over every position of the
// held-out windows: recomputed from the saved final model one position at
// a time, each from its own prefix of the window (the GPT's sampling
// path, not the graph that trained it), it is the loss the run reports.
func TestValidationScoresEveryPosition(t *testing.T) {
	c := tiny(t, tinyText(t))
	c.MLPs, c.LRs, c.Seeds, c.ValChars = experiment.Strings{"gelu"}, experiment.Floats{1e-2}, 1, 200
	res, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	_, gpt, err := c.gpt(res.Data.Vocab.Size(), "gelu", 1, 99)
	if err != nil {
		t.Fatal(err)
	}
	if err := train.LoadWeights(filepath.Join(r.Dir, "model.safetensors"), gpt); err != nil {
		t.Fatal(err)
	}
	next, err := gpt.NextTokenUncached()
	if err != nil {
		t.Fatal(err)
	}
	val := res.Data.Val
	var sum float64
	n := 0
	for w := 0; (w+1)*c.T < len(val); w++ { // windows end to end; each needs its T targets
		for p := range c.T {
			logits, err := next(val[w*c.T : w*c.T+p+1])
			if err != nil {
				t.Fatal(err)
			}
			lse := math.Inf(-1)
			for _, l := range logits {
				lse = max(lse, l) + math.Log1p(math.Exp(-math.Abs(lse-l)))
			}
			sum += lse - logits[val[w*c.T+p+1]]
			n++
		}
	}
	if want, got := sum/float64(n), r.Curve.Last("val_loss"); n != 24*8 || math.Abs(got-want) > 1e-4 {
		t.Errorf("reported validation loss %v; recomputed over %d positions: %v", got, n, want)
	}
}

// The report's parameter counts are the graph's, and they are nanoGPT's
// GPT without biases counted by hand: tied embeddings (V·d + T·d), per
// block two LayerNorm weights (2d), attention (4d²) and the MLP (2·d·h
// ungated, 3·d·h' gated, h' = 2h/3), and the final LayerNorm (d). Gated
// and ungated MLPs hold the same number of weights when 3 divides h.
func TestParamsMatchTheGraph(t *testing.T) {
	const v, T, d, blocks, h = 50, 8, 24, 2, 96
	c := defaults()
	c.T, c.DModel, c.Heads, c.Blocks, c.FF = T, d, 2, blocks, h
	for name, kind := range transformer.MLPs {
		m, _, err := c.gpt(v, name, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		mlp := 2 * d * h
		if kind.Gated() {
			mlp = 3 * d * (2 * h / 3)
		}
		if n, want := m.Graph.NumParams(), v*d+T*d+blocks*(2*d+4*d*d+mlp)+d; n != want || mlp != 2*d*h {
			t.Errorf("%s: the graph has %d parameters, want %d", name, n, want)
		}
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
		{func(c *config) { c.Steps = 0 }, "-steps 0: want > 0"},
		{func(c *config) { c.LRs = experiment.Floats{1e-3, math.NaN()} }, "-lrs [0.001 NaN]: want every value > 0"},
		{func(c *config) { c.LRs = experiment.Floats{20} }, "want lr·weight-decay ≤ 1"},
		{func(c *config) { c.Beta2 = 1 }, "-beta2 1: want < 1"},
		{func(c *config) { c.Temperature = math.Inf(1) }, "-temperature"},
		{func(c *config) { c.T = 5000 }, "want more than -T 5000 in each; use a longer text, a smaller -T or a larger -val-chars"},
		{func(c *config) { c.ValChars = 8 }, "and 8 to validate on"},
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
	for _, c := range []*config{&a, &b} {
		c.MLPs, c.LRs, c.Seeds, c.Steps = experiment.Strings{"gelu", "swiglu"}, experiment.Floats{1e-2}, 1, 10
	}
	b.Recompute = true
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

// -full is nanoGPT's CPU recipe for its Shakespeare baby GPT, except for
// what the command line sets; -shard and a Slurm array task pick the
// worker's part.
func TestParseFlags(t *testing.T) {
	parse := func(args []string, env ...string) (config, error) {
		fs := flag.NewFlagSet("char-gpt", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return parseFlags(fs, args, func(k string) string {
			if i := slices.Index(env, k); i >= 0 {
				return env[i+1]
			}
			return ""
		})
	}
	c, err := parse([]string{"-full", "-steps", "500", "-shard", "1/2"})
	if err != nil {
		t.Fatal(err)
	}
	if c.T != 64 || c.Batch != 12 || c.Blocks != 4 || c.Heads != 4 || c.DModel != 128 || c.FF != 0 || c.Steps != 500 || c.EvalEvery != 250 ||
		c.Warmup != 100 || !slices.Equal(c.LRs, experiment.Floats{5e-4, 1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2}) || c.ValChars != 0 || c.Beta2 != 0.99 ||
		c.WeightDecay != 0.1 || c.Clip != 1 || c.Part != (experiment.Shard{Index: 1, Count: 2}) {
		t.Errorf("-full -steps 500 -shard 1/2 parsed as %+v", c)
	}
	if want := []string{"char-gpt", "-full", "-steps", "500"}; !slices.Equal(c.Args, want) {
		t.Errorf("the report's command is %q, want %q", c.Args, want)
	}
	c, err = parse(nil, "SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "4", "SLURM_ARRAY_TASK_COUNT", "4")
	if err != nil || c.Part != (experiment.Shard{Index: 1, Count: 4}) || c.T != 32 {
		t.Errorf("in a Slurm array task: shard %v, -T %d, %v", c.Part, c.T, err)
	}
	if _, err := parse([]string{"-full", "extra"}); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("an extra argument: %v", err)
	}
}

// Two workers sharing -out, each started twice, make the files one
// process makes (besides timing.csv and the grids' grid.json). In the
// first round worker 0 stops after its share of the selection, which
// worker 1 then completes and goes on to its share of the chosen rates;
// in the second, worker 0 finds the selection done, trains its share of
// the chosen rates and, every run being there, claims and writes the
// report. Worker 1, started again, names worker 0 as the report's maker;
// worker 0, started again, trains nothing and writes the same files
// again.
func TestShardsMakeTheSameReport(t *testing.T) {
	text := tinyText(t)
	one := tiny(t, text)
	if _, err := run(context.Background(), one); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	shard := func(i int) (*results, error) {
		c := tiny(t, text)
		c.Out, c.Part = out, experiment.Shard{Index: i, Count: 2}
		return run(context.Background(), c)
	}
	if _, err := shard(0); !errors.Is(err, experiment.ErrIncomplete) || !strings.Contains(err.Error(), "learning-rate selection") {
		t.Fatalf("shard 0, first start: %v, want its share of the selection done", err)
	}
	if _, err := shard(1); !errors.Is(err, experiment.ErrIncomplete) || strings.Contains(err.Error(), "learning-rate selection") {
		t.Fatalf("shard 1, first start: %v, want the selection done and its share of the chosen rates", err)
	}
	if res, err := shard(0); err != nil || len(res.Runs) != 10 {
		t.Fatalf("shard 0, second start: %v", err)
	}
	extest.SameFiles(t, one.Out, out, "timing.csv")
	if _, err := shard(1); !errors.Is(err, experiment.ErrIncomplete) || !strings.Contains(err.Error(), "shard 0/2, which claimed the report first") {
		t.Fatalf("shard 1, second start: %v, want the claimant of the report named", err)
	}
	if res, err := shard(0); err != nil || len(res.Runs) != 10 {
		t.Fatalf("shard 0, third start: %v", err)
	}
	extest.SameFiles(t, one.Out, out, "timing.csv")
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
// diverge here (-lrs is bounded by lr·weight-decay ≤ 1, which these
// models survive), so the runs of a tiny grid are cut as a divergence
// cuts them: relu's seed 1 at step 15 (after its evaluation at step 10),
// gelu's both seeds at step 5 (before any evaluation after step 0).
// Writing the report twice gives the same files.
func TestDivergedRunsAreReported(t *testing.T) {
	c := tiny(t, tinyText(t))
	c.MLPs, c.LRs = experiment.Strings{"relu", "gelu"}, experiment.Floats{1e-2}
	res, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]float64{}
	for _, r := range res.Runs { // seed 1 relu, gelu; seed 2 relu, gelu
		keep[fmt.Sprint(r.Setting.MLP, r.Seed)] = r.Curve.Last("val_loss")
		switch {
		case r.Setting.MLP == "gelu":
			diverge(r, 5)
		case r.Seed == 1:
			diverge(r, 15)
		}
	}
	_, dir := extest.RunTwice(t, func(dir string, first bool) (*results, error) {
		c.Out = dir
		return res, writeReport(c, res)
	})
	sum := extest.CheckOutput(t, dir, "char-gpt -steps 30", "results.csv", "samples.csv", "claims.csv", "loss.png")
	// relu's median is its one finished seed's; gelu has none.
	if v, _ := sum.Number("relu.final_val_loss"); v != keep["relu2"] {
		t.Errorf("relu.final_val_loss = %v, want seed 2's %v", v, keep["relu2"])
	}
	if v := sum.Values["gelu.final_val_loss"]; v != "NaN" {
		t.Errorf("gelu.final_val_loss = %v, want NaN: no run finished", v)
	}
	if g, r := sum.Values["gelu.diverged"], sum.Values["relu.diverged"]; g != 2.0 || r != 1.0 {
		t.Errorf("diverged runs: gelu %v, relu %v; want 2, 1", g, r)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"| relu | 0.01 | 1 | ", " | diverged at step 15 | diverged at step 15 | diverged at step 15 | diverged at step 15 |",
		"3 of 4 runs diverged", "- relu, seed 1: diverged at step 15: train: step 15: loss is NaN", "- gelu, seed 2: diverged at step 5: ",
		"(no sample: the run diverged at step 5)", "No line for gelu: every run diverged before its first evaluation after step 0.",
		"(medians; no run of gelu finished), gelu lower in 0 of 0 seeds"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// -resume reads finished runs back instead of training them again, when
// their fingerprint matches: the same command trains nothing and writes
// the same results, summary and report; another -clip trains every run
// anew.
func TestResumeByFingerprint(t *testing.T) {
	c := tiny(t, tinyText(t))
	c.MLPs, c.Seeds = experiment.Strings{"relu", "swiglu"}, 2
	first, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"results.csv", "summary.json", "report.md"}
	read := func() (b [][]byte) {
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(c.Out, f))
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, data)
		}
		return b
	}
	before := read()
	c.Resume = true
	again, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	after := read()
	for _, r := range again.All {
		if !r.Resumed {
			t.Errorf("%s seed %d trained again", r.Name, r.Seed)
		}
	}
	if len(again.All) != len(first.All) {
		t.Errorf("resumed: %d runs, want %d", len(again.All), len(first.All))
	}
	for i, f := range files {
		if !bytes.Equal(before[i], after[i]) {
			t.Errorf("resumed: %s\n%s\nwant\n%s", f, after[i], before[i])
		}
	}
	c.Clip = 0.5
	other, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range other.All {
		if r.Resumed {
			t.Errorf("%s seed %d read back although -clip changed", r.Name, r.Seed)
		}
	}
}

// With -wait, two workers started at once each wait for the other's share
// of the selection instead of stopping, then train their share of the
// chosen rates; the files are the ones a single process writes. Cancelling
// a waiting worker ends its wait with the context's error.
func TestShardsWait(t *testing.T) {
	defer func(p time.Duration) { waitPoll = p }(waitPoll)
	waitPoll = 20 * time.Millisecond
	text := tinyText(t)
	one := tiny(t, text)
	if _, err := run(context.Background(), one); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := tiny(t, text)
			c.Out, c.Part, c.Wait = out, experiment.Shard{Index: i, Count: 2}, true
			_, errs[i] = run(context.Background(), c)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && (!errors.Is(err, experiment.ErrIncomplete) || strings.Contains(err.Error(), "learning-rate selection")) {
			t.Errorf("shard %d/2: %v; want the selection waited for, then done or its share of the chosen rates done", i, err)
		}
	}
	if errs[0] != nil && errs[1] != nil {
		t.Fatalf("no shard wrote the report: %v", errs)
	}
	extest.SameFiles(t, one.Out, out, "timing.csv")

	// Shard 0 of a new folder waits for shard 1, which never comes, until
	// cancelled once it says it waits.
	ctx, cancel := context.WithCancel(context.Background())
	c := tiny(t, text)
	c.Part, c.Wait, c.Quiet = experiment.Shard{Index: 0, Count: 2}, true, false
	c.Progress = writerFunc(func(p []byte) {
		if strings.Contains(string(p), "waiting for the other shards: 5 of the selection's 10 runs are finished") {
			cancel()
		}
	})
	if _, err := run(ctx, c); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for the other shards' selection runs") {
		t.Errorf("cancelled while waiting: %v", err)
	}
}

// writerFunc is an io.Writer calling f with what is written.
type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
