package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geluproject/gelu/graph/rng"
)

// toyRun "trains" a run without a network: a noisy decay whose noise comes
// from the run's seed and setting only, and whose duration varies, so that
// parallel workers finish in a scrambled order.
func toyRun(r *Run[float64]) error {
	g := rng.New(r.Seed, fmt.Sprint("toy ", r.Setting))
	time.Sleep(time.Duration(g.IntN(3)) * time.Millisecond)
	loss := 1.0
	var steps []float64
	for step := 1; step <= 6; step++ {
		loss *= 1 - r.Setting*(0.5+g.Float64())
		steps = append(steps, loss)
		if step%2 == 0 {
			if err := r.Curve.Add(step, loss, g.Normal()); err != nil {
				return err
			}
		}
	}
	r.Values["final"], r.Values["nan"], r.Values["inf"] = loss, math.NaN(), math.Inf(-1)
	r.Vectors["steps"] = steps
	r.Steps = 6
	return nil
}

func toyGrid(dir string, workers int) Grid[float64] {
	return Grid[float64]{Settings: []float64{0.1, 0.2, 0.3}, Seeds: []uint64{1, 2, 3}, Metrics: []string{"loss", "noise"},
		Name: func(lr float64) string { return fmt.Sprintf("lr%g", lr) }, Dir: dir, Workers: workers, Fingerprint: "toy v1"}
}

// strip keeps what a run measured, for comparing runs made differently.
func strip(runs []*Run[float64]) []Run[float64] {
	var out []Run[float64]
	for _, r := range runs {
		c := *r
		c.Dir, c.Seconds, c.StepSeconds, c.Resumed = "", 0, 0, false
		out = append(out, c)
	}
	return out
}

func TestGridIsDeterministicWithWorkers(t *testing.T) {
	one, err := toyGrid("", 1).Run(toyRun)
	if err != nil {
		t.Fatal(err)
	}
	// Seeds outermost, settings in order.
	for i, r := range one {
		if want := fmt.Sprintf("lr%g", []float64{0.1, 0.2, 0.3}[i%3]); r.Name != want || r.Seed != uint64(1+i/3) {
			t.Errorf("run %d is %s seed %d, want %s seed %d", i, r.Name, r.Seed, want, 1+i/3)
		}
	}
	for _, w := range []int{2, 4, 9} {
		many, err := toyGrid("", w).Run(toyRun)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fmt.Sprint(strip(one)), fmt.Sprint(strip(many))) {
			t.Errorf("%d workers give other runs than 1 worker", w)
		}
	}
}

func TestGridResumesByFingerprint(t *testing.T) {
	dir := t.TempDir()
	first, err := toyGrid(dir, 2).Run(toyRun)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lr0.2", "seed3", "run.json")); err != nil {
		t.Fatalf("run folder not written: %v", err)
	}
	var calls atomic.Int32
	count := func(r *Run[float64]) error { calls.Add(1); return toyRun(r) }

	// Resume: nothing is trained again, and everything reads back exactly,
	// NaN and -Inf included.
	g := toyGrid(dir, 2)
	g.Resume = true
	again, err := g.Run(count)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Errorf("%d runs trained again under Resume", calls.Load())
	}
	for i, r := range again {
		if !r.Resumed || r.Dir != first[i].Dir {
			t.Errorf("run %d: resumed %v from %s", i, r.Resumed, r.Dir)
		}
	}
	if a, b := fmt.Sprintf("%v", strip(first)), fmt.Sprintf("%v", strip(again)); a != b {
		t.Errorf("resumed runs differ:\n%s\n%s", a, b)
	}
	if v := again[4].Values; !math.IsNaN(v["nan"]) || !math.IsInf(v["inf"], -1) || v["final"] != first[4].Values["final"] {
		t.Errorf("values read back as %v", v)
	}

	// One run's settings changed (another fingerprint): only it trains.
	os.WriteFile(filepath.Join(dir, "lr0.3", "seed2", "run.json"), []byte(`{"fingerprint": "old"}`), 0o644)
	if _, err := g.Run(count); err != nil || calls.Load() != 1 {
		t.Errorf("after one stale run.json: %d runs trained (want 1), error %v", calls.Load(), err)
	}
	// Another program version: every run trains again.
	g.Fingerprint = "toy v2"
	if _, err := g.Run(count); err != nil || calls.Load() != 10 {
		t.Errorf("after a new fingerprint: %d runs trained in all (want 10), error %v", calls.Load(), err)
	}
	// A matching run whose curve.csv is damaged is an error, not a retrain.
	os.WriteFile(filepath.Join(dir, "lr0.1", "seed1", "curve.csv"), []byte("step,loss\n2,x\n"), 0o644)
	if _, err := g.Run(count); err == nil || !strings.Contains(err.Error(), "lr0.1 seed 1") || !strings.Contains(err.Error(), "curve.csv") {
		t.Errorf("damaged curve.csv: error %v, want one naming the run and the file", err)
	}
}

func TestGridErrors(t *testing.T) {
	g := toyGrid("", 2)
	var calls atomic.Int32
	_, err := g.Run(func(r *Run[float64]) error {
		calls.Add(1)
		if r.Setting == 0.2 {
			return errors.New("out of memory")
		}
		time.Sleep(time.Millisecond)
		return toyRun(r)
	})
	if err == nil || err.Error() != "lr0.2 seed 1: out of memory" {
		t.Errorf("error %v, want the failing run's", err)
	}
	if n := calls.Load(); n == 9 {
		t.Errorf("all %d runs started after the first failure", n)
	}
	_, err = g.Run(func(r *Run[float64]) error { var m map[string]int; m["x"]++; return nil })
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Errorf("a panicking run: %v", err)
	}
	g.Settings = []float64{0.1, 0.1}
	if _, err := g.Run(toyRun); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a setting listed twice: %v", err)
	}
	if _, err := (Grid[float64]{}).Run(toyRun); err == nil {
		t.Error("an empty grid ran")
	}
}
