package extest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/report"
)

// SameFiles fails t for every file under a (recursively) whose bytes
// differ from the file of the same path under b, or that b lacks, except
// files named in skip (wall-clock timings, say). It returns how many files
// it compared, so a caller can check that the run wrote what it should.
func SameFiles(t testing.TB, a, b string, skip ...string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(a, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || slices.Contains(skip, e.Name()) {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs of the same configuration (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil {
		t.Errorf("comparing %s with %s: %v", a, b, err)
	}
	if n == 0 {
		t.Errorf("%s holds no file to compare", a)
	}
	return n
}

// RunTwice runs an example twice, run(dir, true) and then run(dir2,
// false) in two new temporary folders (the second run may differ in what
// must not matter, such as the number of workers), fails t if either run
// fails or their folders differ in any file but skip (SameFiles), and
// returns the first run's result and folder.
func RunTwice[R any](t testing.TB, run func(dir string, first bool) (R, error), skip ...string) (R, string) {
	t.Helper()
	res, dir, _ := RunTwiceCount(t, run, skip...)
	return res, dir
}

// RunTwiceCount is RunTwice that also returns how many files it compared,
// so that a caller can check that the runs wrote what they should.
func RunTwiceCount[R any](t testing.TB, run func(dir string, first bool) (R, error), skip ...string) (R, string, int) {
	t.Helper()
	dir, dir2 := t.TempDir(), t.TempDir()
	res, err := run(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(dir2, false); err != nil {
		t.Fatal(err)
	}
	return res, dir, SameFiles(t, dir, dir2, skip...)
}

// CheckOutput checks an example's output folder: each of files (paths
// relative to dir) exists and is not empty, report.md starts with command
// in a sh block and lists no errors, and every summary.json key has a
// description. It returns the summary for the example's own checks.
func CheckOutput(t testing.TB, dir, command string, files ...string) *report.Summary {
	t.Helper()
	for _, f := range append([]string{"report.md", "summary.json"}, files...) {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.HasPrefix(string(md), "```sh\n"+command+"\n```\n") {
		t.Errorf("report.md does not start with the command %q:\n%.200s", command, md)
	}
	if i := strings.Index(string(md), "\n## Errors\n"); i >= 0 {
		t.Errorf("report.md lists errors:\n%s", md[i:])
	}
	sum, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u := sum.Undocumented(); len(u) > 0 {
		t.Errorf("summary keys without a description: %v", u)
	}
	return sum
}

// BenchSteps times b.N training steps of the compiled model m (forward,
// backward, opt.Step on params; the inputs already set) and reports their
// rate as perStep·steps/s under unit ("steps/s" with perStep 1,
// "tokens/s" with the tokens of one batch). One untimed step comes first,
// so that the first step's allocations (optimizer state, buffers) are not
// averaged into the reported allocations per step.
func BenchSteps(b *testing.B, m *graph.Machine, opt optim.Optimizer, params []graph.NamedTensor, perStep float64, unit string) {
	b.Helper()
	step := func() {
		if err := m.Run(); err != nil {
			b.Fatal(err)
		}
		grads, err := m.Grads()
		if err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(params, grads); err != nil {
			b.Fatal(err)
		}
	}
	step()
	b.ResetTimer()
	for range b.N {
		step()
	}
	b.ReportMetric(perStep*float64(b.N)/b.Elapsed().Seconds(), unit)
}
