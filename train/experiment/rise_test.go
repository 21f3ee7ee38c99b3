package experiment

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/train"
)

// steady falls from 10 by 0.1 a step: it never rises. spike is 20 steps
// at 2, 10 at 4 and 20 at 1: its 10-step mean climbs from 2 to 4 at step
// 30, then falls.
func steadyAndSpike() (steady, spike []float64) {
	for i := range 40 {
		steady = append(steady, 10-float64(i)/10)
	}
	for i := range 50 {
		spike = append(spike, map[bool]float64{true: 2, false: 4}[i < 20])
		if i >= 30 {
			spike[i] = 1
		}
	}
	return steady, spike
}

func TestMaxRiseOverRuns(t *testing.T) {
	steady, spike := steadyAndSpike()
	runs := []*Run[string]{
		{Setting: "a", Name: "a", Seed: 1, Vectors: map[string][]float64{"loss": steady}, Steps: 40, StepSeconds: 0.5},
		{Setting: "a", Name: "a", Seed: 2, Vectors: map[string][]float64{"loss": spike}, Steps: 50, StepSeconds: 1.5},
	}
	g := Groups(runs)[0]
	if rise, at := g.MaxRise("loss", 10); math.Abs(rise-2) > 1e-12 || at != 30 {
		t.Errorf("largest rise %v at step %d, want 2 at step 30 (seed 2)", rise, at)
	}
	if rise, at := (&Group[string]{Runs: runs[:1]}).MaxRise("loss", 10); rise != 0 || at != 0 {
		t.Errorf("a falling loss rose %v at step %d, want 0 at 0", rise, at)
	}
	if rise, _ := (&Group[string]{}).MaxRise("loss", 10); rise != -1 {
		t.Errorf("no runs: rise %v, want −1", rise)
	}
	rs := Rises(runs, "loss", 10, 1.5)
	if len(rs) != 1 || rs[0].Seed != 2 || rs[0].At != 30 || math.Abs(rs[0].Rise-2) > 1e-12 {
		t.Errorf("rises above 1.5: %+v, want seed 2 by 2 at step 30", rs)
	}
	if rs := Rises(runs, "loss", 10, 2.5); len(rs) != 0 {
		t.Errorf("rises above 2.5: %+v, want none", rs)
	}
	// 0.5 s + 1.5 s for 40 + 50 steps of 8 examples.
	if s, n := Throughput(runs, 8); s != 2 || n != 720 {
		t.Errorf("throughput %v s for %v examples, want 2 s for 720", s, n)
	}
}

func TestRecordLoss(t *testing.T) {
	r := &Run[int]{Vectors: map[string][]float64{}}
	rec := r.RecordLoss("step_loss")
	for i, l := range []float64{3, 2.5, 2} {
		if err := rec(nil, train.StepInfo{Step: i + 1, Loss: l}); err != nil {
			t.Fatal(err)
		}
	}
	if v := r.Vectors["step_loss"]; len(v) != 3 || v[0] != 3 || v[2] != 2 {
		t.Errorf("recorded %v, want [3 2.5 2]", v)
	}
}
