package extest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/report"
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
}
