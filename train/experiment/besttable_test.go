package experiment

import (
	"fmt"
	"math"
	"testing"
)

// A 2×2 grid of (act, bias) with two learning rates each, worked by hand:
// relu/b0 best at lr 0.3 (0.9 > 0.8), relu/b1 only NaN and 0.4 (NaN loses),
// gelu/b0 ties at 0.7 (the first, lr 0.1, stays), gelu/b1 never ran.
func TestBestTable(t *testing.T) {
	type setting struct {
		Act, Bias string
		LR        float64
	}
	acc := map[setting]float64{{"relu", "b0", 0.1}: 0.8, {"relu", "b0", 0.3}: 0.9, {"relu", "b1", 0.1}: math.NaN(),
		{"relu", "b1", 0.3}: 0.4, {"gelu", "b0", 0.1}: 0.7, {"gelu", "b0", 0.3}: 0.7}
	var runs []*Run[setting]
	for _, s := range []setting{{"relu", "b0", 0.1}, {"relu", "b0", 0.3}, {"relu", "b1", 0.1}, {"relu", "b1", 0.3},
		{"gelu", "b0", 0.1}, {"gelu", "b0", 0.3}} {
		runs = append(runs, &Run[setting]{Setting: s, Values: map[string]float64{"acc": acc[s]}})
	}
	acts, biases := []string{"relu", "gelu"}, []string{"b0", "b1"}
	tab := BestTable(runs, []string{"act", "bias b0", "bias b1"}, acts,
		func(i, j int, s setting) bool { return s.Act == acts[i] && s.Bias == biases[j] },
		func(r *Run[setting]) float64 { return r.Values["acc"] },
		func(r *Run[setting]) any { return fmt.Sprintf("%g@%g", r.Values["acc"], r.Setting.LR) })
	if got, want := fmt.Sprint(tab.Header, tab.Rows), "[act bias b0 bias b1] [[relu 0.9@0.3 0.4@0.3] [gelu 0.7@0.1 —]]"; got != want {
		t.Errorf("BestTable = %s, want %s", got, want)
	}
}

func TestProduct3(t *testing.T) {
	got := Product3([]string{"x", "y"}, []int{1, 2}, []bool{true}, func(a string, b int, c bool) string { return fmt.Sprintf("%s%d%t", a, b, c) })
	if want := "[x1true x2true y1true y2true]"; fmt.Sprint(got) != want {
		t.Errorf("Product3 = %v, want %s", got, want)
	}
	if n := len(Product3([]int{1}, []int{}, []int{1}, func(a, b, c int) int { return a })); n != 0 {
		t.Errorf("Product3 with an empty factor: %d settings, want 0", n)
	}
}

func TestDivergedCell(t *testing.T) {
	ok, bad := &Run[int]{Steps: 7}, &Run[int]{Steps: 7, Diverged: "loss is NaN"}
	// A run that diverged after 7 completed steps diverged at step 8.
	if ok.DivergedCell() != "no" || bad.DivergedCell() != 8 {
		t.Errorf("DivergedCell: %v and %v, want no and 8", ok.DivergedCell(), bad.DivergedCell())
	}
	if got, want := bad.UnlessDiverged(1.5), "diverged at step 8"; got != want {
		t.Errorf("UnlessDiverged of a diverged run: %v, want %q", got, want)
	}
	if got := ok.UnlessDiverged(1.5); got != 1.5 {
		t.Errorf("UnlessDiverged of a finished run: %v, want its cell 1.5", got)
	}
}
