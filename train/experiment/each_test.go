package experiment

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

func TestEachKeepsOrder(t *testing.T) {
	words := []string{"one", "three", "five", "eleven"}
	got, err := Each(words, func(s string) string { return s }, 1, 3, func(s string) (int, error) { return len(s), nil })
	if err != nil || !slices.Equal(got, []int{3, 5, 4, 6}) {
		t.Errorf("Each = %v, %v; want [3 5 4 6]", got, err)
	}
	boom := errors.New("boom")
	_, err = Each(words, func(s string) string { return s }, 1, 2, func(s string) (int, error) {
		if s == "five" {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "five") {
		t.Errorf("Each with a failing setting: %v, want boom naming five", err)
	}
}

func TestFirst(t *testing.T) {
	d := &datasets.Dataset{Name: "five", X: []float32{0, 1, 2, 3, 4}, Features: 1, Labels: []int{4, 3, 2, 1, 0}, Classes: 5}
	f, err := First(d, 3)
	if err != nil || !slices.Equal(f.X, []float32{0, 1, 2}) || !slices.Equal(f.Labels, []int{4, 3, 2}) {
		t.Fatalf("First(d, 3) = %+v, %v; want the rows 0, 1, 2", f, err)
	}
	for _, n := range []int{-1, 6} {
		if _, err := First(d, n); err == nil || !strings.Contains(err.Error(), "has 5") {
			t.Errorf("First(d, %d): %v, want an error naming the 5 examples", n, err)
		}
	}
}

func TestStepSeries(t *testing.T) {
	s := StepSeries("loss", []int{0, 10, 25}, []float64{3, 2, 1})
	if s.Name != "loss" || !slices.Equal(s.X, []float64{0, 10, 25}) || !slices.Equal(s.Y, []float64{3, 2, 1}) {
		t.Errorf("StepSeries = %+v", s)
	}
}

func TestBestRun(t *testing.T) {
	type set struct {
		Family string
		LR     float64
	}
	mk := func(fam string, lr, acc float64) *Run[set] {
		return &Run[set]{Setting: set{fam, lr}, Values: map[string]float64{"acc": acc}}
	}
	runs := []*Run[set]{mk("a", 1, math.NaN()), mk("a", 2, 0.5), mk("b", 3, 0.9), mk("a", 4, 0.7), mk("a", 5, 0.6), mk("c", 6, math.NaN()), mk("c", 7, math.NaN())}
	acc := func(r *Run[set]) float64 { return r.Values["acc"] }
	of := func(fam string) func(set) bool { return func(s set) bool { return s.Family == fam } }
	if b := BestRun(runs, of("a"), acc); b == nil || b.Setting.LR != 4 {
		t.Errorf("best of a: %+v, want lr 4 (0.7; the NaN run loses)", b)
	}
	if b := BestRun(runs, of("c"), acc); b == nil || b.Setting.LR != 7 {
		t.Errorf("best of c: %+v, want lr 7 (all NaN: the last)", b)
	}
	if b := BestRun(runs, of("d"), acc); b != nil {
		t.Errorf("best of d: %+v, want nil", b)
	}
}
