package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Step, epoch and batch are written as integers at any size: formatted as
// floats, step 1000000 would read "1e+06", which resuming (rowsUpTo) could
// not parse back.
func TestMetricsWriteLargeStepsAsIntegers(t *testing.T) {
	dir := t.TempDir()
	m, err := openMetrics(dir, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.step(StepInfo{Step: 1000000, Epoch: 12, Batch: 3, Loss: 0.5, LR: 1e-3, GradNorm: 2}); err != nil {
		t.Fatal(err)
	}
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "steps.csv"))
	if !strings.Contains(string(b), "\n1000000,12,3,0.5,0.001,2\n") {
		t.Errorf("steps.csv:\n%s", b)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "steps.jsonl"))
	if !strings.HasPrefix(string(b), `{"step":1000000,"epoch":12,`) {
		t.Errorf("steps.jsonl:\n%s", b)
	}
	kept, err := rowsUpTo(filepath.Join(dir, "steps.csv"), 1000000, []byte(strings.Join(stepCols, ",")+"\n"))
	if err != nil || !strings.Contains(string(kept), "1000000,") {
		t.Errorf("rowsUpTo: %q, %v", kept, err)
	}
}
