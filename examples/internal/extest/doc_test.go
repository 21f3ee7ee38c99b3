package extest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/train/report"
)

// The test of an example program, whose run is the function program here:
// two runs, with one worker and then two, must write the same files but
// timing.csv, and the folder must hold a report that starts with the
// command and documents its summary keys. The body is the package
// documentation's sketch.
func TestExampleProgram(t *testing.T) {
	program := func(dir string, workers int) (float64, error) { // an example program's run
		r, err := report.New(dir, "Squares", report.WithCommand("squares", "-n", "10"))
		if err != nil {
			return 0, err
		}
		sum := 0.0
		for i := 1; i <= 10; i++ {
			sum += float64(i * i)
		}
		r.Describe("sum", "1² + 2² + … + 10²")
		r.Set("sum", sum)
		timing := fmt.Sprintf("workers,%d\n", workers) // a real program's wall times: they differ between runs
		return sum, errors.Join(r.Close(), os.WriteFile(filepath.Join(dir, "timing.csv"), []byte(timing), 0o644))
	}
	res, dir := extest.RunTwice(t, func(dir string, first bool) (float64, error) {
		return program(dir, extest.Workers(first)) // 1, then 2 workers: must not change a byte
	}, "timing.csv")
	sum := extest.CheckOutput(t, dir, "squares -n 10", "timing.csv")
	if v, ok := sum.Number("sum"); !ok || v != 385 || res != 385 {
		t.Errorf("summary sum = %v (found: %v), result %v; want 385 (n(n+1)(2n+1)/6)", v, ok, res)
	}
}
