package extest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatal(a ...any)            { r.errs = append(r.errs, fmt.Sprint(a...)) }

func write(t *testing.T, dir string, files map[string]string) {
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSameFiles(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{"x.csv": "1", "runs/s1/y.csv": "2", "timing.csv": "3", "only-a.txt": "4"})
	write(t, b, map[string]string{"x.csv": "1", "runs/s1/y.csv": "2 ", "timing.csv": "other"})
	rec := &recorder{TB: t}
	n := SameFiles(rec, a, b, "timing.csv")
	if n != 3 {
		t.Errorf("compared %d files, want 3 (timing.csv skipped)", n)
	}
	got := strings.Join(rec.errs, "\n")
	if len(rec.errs) != 2 || !strings.Contains(got, filepath.Join("runs", "s1", "y.csv")) || !strings.Contains(got, "only-a.txt") {
		t.Errorf("failures:\n%s\nwant one for runs/s1/y.csv and one for only-a.txt", got)
	}
	rec = &recorder{TB: t}
	if SameFiles(rec, t.TempDir(), b); len(rec.errs) != 1 {
		t.Errorf("empty folder: %q, want one failure", rec.errs)
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	r, err := report.New(dir, "T", report.WithCommand("prog", "-n", "2"))
	if err != nil {
		t.Fatal(err)
	}
	r.Describe("a", "A")
	r.Set("a", 1.5)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	if sum := CheckOutput(rec, dir, "prog -n 2"); len(rec.errs) > 0 || sum == nil {
		t.Fatalf("a good folder: %q", rec.errs)
	} else if v, ok := sum.Number("a"); !ok || v != 1.5 {
		t.Errorf("a = %v, %v", v, ok)
	}
	// An undocumented key (written by hand: Report refuses to), a wrong
	// command and a missing file.
	raw, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	write(t, dir, map[string]string{"summary.json": strings.Replace(string(raw), `"a": 1.5`, `"a": 1.5, "b": 2`, 1)})
	rec = &recorder{TB: t}
	CheckOutput(rec, dir, "prog -n 3", "plot.png")
	got := strings.Join(rec.errs, "\n")
	for _, want := range []string{"plot.png: missing", `command "prog -n 3"`, "without a description: [b]"} {
		if !strings.Contains(got, want) {
			t.Errorf("failures:\n%s\nlack %q", got, want)
		}
	}
}

func TestRunTwice(t *testing.T) {
	var firsts []bool
	run := func(dir string, first bool) (int, error) {
		firsts = append(firsts, first)
		body := map[bool]string{true: "a", false: "b"}[first]
		write(t, dir, map[string]string{"same.csv": "x", "timing.csv": body})
		return len(firsts), nil
	}
	rec := &recorder{TB: t}
	res, dir := RunTwice(rec, run, "timing.csv")
	if res != 1 || len(firsts) != 2 || !firsts[0] || firsts[1] || len(rec.errs) > 0 {
		t.Errorf("result %d, runs %v, failures %q; want the first run's result 1, runs [true false], no failure", res, firsts, rec.errs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "timing.csv")); err != nil || string(b) != "a" {
		t.Errorf("returned folder holds %q (%v), want the first run's", b, err)
	}
	rec = &recorder{TB: t}
	if RunTwice(rec, run); len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "timing.csv differs") {
		t.Errorf("without skip: %q, want timing.csv reported", rec.errs)
	}
	rec = &recorder{TB: t}
	if _, _, n := RunTwiceCount(rec, run, "timing.csv"); n != 1 || len(rec.errs) > 0 {
		t.Errorf("RunTwiceCount compared %d files (failures %q), want 1: same.csv", n, rec.errs)
	}
}

// BenchSteps runs one untimed step and b.N timed real steps: with loss
// Σ x·w, SGD (lr ½) moves w by −½x each step, so after N+1 steps from 0,
// w = −(N+1)·x/2.
func TestBenchStepsSteps(t *testing.T) {
	var n int
	var w []float64
	res := testing.Benchmark(func(b *testing.B) {
		g, _ := graph.New(tensor.Float64, 1)
		x, _ := g.Input("x", 3)
		p, _ := g.Param("w", graph.Constant(0), 3)
		prod, _ := G.HadamardProd(x, p)
		loss, _ := G.Sum(prod)
		m, err := g.Compile(loss)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Set(x, tensor.New(tensor.WithBacking([]float64{1, 2, 3}))); err != nil {
			b.Fatal(err)
		}
		params := g.ParamTensors()
		BenchSteps(b, m, &optim.SGD{LearningRate: 0.5}, params, 3, "widgets/s")
		n, w = b.N, params[0].Value.Float64s()
	})
	for i, xi := range []float64{1, 2, 3} {
		if want := -float64(n+1) * xi / 2; w[i] != want {
			t.Errorf("after %d+1 steps w[%d] = %v, want %v", n, i, w[i], want)
		}
	}
	if _, ok := res.Extra["widgets/s"]; !ok || n < 1 {
		t.Errorf("%d steps, metrics %v: want widgets/s reported", n, res.Extra)
	}
}
