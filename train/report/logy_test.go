package report

import (
	"math"
	"slices"
	"testing"
)

func TestSplitLogY(t *testing.T) {
	nan := math.NaN()
	in := []Series{
		{Name: "zero", Y: []float64{0, 0}},
		{Name: "one point", Y: []float64{0, 1e-300}},
		{Name: "negative", Y: []float64{-1, nan}},
		{Name: "empty"},
		{Name: "positive", Y: []float64{nan, 2}},
	}
	shown, hidden := SplitLogY(in)
	var names []string
	for _, s := range shown {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"one point", "positive"}) || !slices.Equal(hidden, []string{"zero", "negative", "empty"}) {
		t.Errorf("shown %v, hidden %v", names, hidden)
	}
}
