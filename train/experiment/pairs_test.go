package experiment

import (
	"fmt"
	"testing"
)

func TestPairs(t *testing.T) {
	type setting struct {
		Act string
		LR  float64
	}
	var runs []*Run[setting]
	for _, s := range []setting{{"relu", 0.1}, {"gelu", 0.1}, {"silu", 0.1}, {"gelu", 0.3}, {"relu", 0.3}, {"relu", 0.5}} {
		runs = append(runs, &Run[setting]{Setting: s})
	}
	is := func(act string) func(setting) bool { return func(s setting) bool { return s.Act == act } }
	pairs := Pairs(runs, is("relu"), is("gelu"), func(s setting) float64 { return s.LR })
	got := fmt.Sprint(len(pairs))
	for _, p := range pairs {
		got += fmt.Sprintf(" %v/%v", p[0].Setting, p[1].Setting)
	}
	// relu at 0.5 has no gelu partner; silu is neither side.
	if want := "2 {relu 0.1}/{gelu 0.1} {relu 0.3}/{gelu 0.3}"; got != want {
		t.Errorf("Pairs = %s, want %s", got, want)
	}
}
