package experiment

import (
	"slices"
	"strings"
	"testing"
)

func TestNewEpochPlan(t *testing.T) {
	// 520 examples in batches of 64: 8 full batches an epoch (8 examples
	// dropped); 3 evaluations an epoch: every 8/3 → 2 steps, and each
	// epoch's end (8, 16 already even).
	e, err := NewEpochPlan(520, 64, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 4, 6, 8, 10, 12, 14, 16}; e.PerEpoch != 8 || e.EvalEvery != 2 || !slices.Equal(e.EvalSteps, want) {
		t.Errorf("plan %+v, want 8 steps an epoch, evaluations every 2 at %v", e, want)
	}
	// 7 steps an epoch, evaluated twice: every 3 steps and at 7, 14.
	e, _ = NewEpochPlan(70, 10, 2, 2)
	if want := []int{3, 6, 7, 9, 12, 14}; !slices.Equal(e.EvalSteps, want) {
		t.Errorf("evaluations at %v, want %v", e.EvalSteps, want)
	}
	if got := e.Epoch(21); got != 3 {
		t.Errorf("step 21 of 7 an epoch is epoch %v, want 3", got)
	}
	if _, err := NewEpochPlan(63, 64, 1, 1); err == nil || !strings.Contains(err.Error(), "63 training examples make no batch of 64") {
		t.Errorf("too few examples: %v", err)
	}
	if _, err := NewEpochPlan(640, 64, 1, 0); err == nil {
		t.Error("0 evaluations per epoch: no error")
	}
}
