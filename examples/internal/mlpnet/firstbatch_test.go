package mlpnet

import (
	"github.com/geluproject/gelu/train/experiment"
	"slices"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

// The first batch is a seed-dependent sample of distinct rows of the
// dataset, the same for the same seed, and the whole dataset (permuted)
// when the batch is as large as the dataset.
func TestFirstBatch(t *testing.T) {
	x := []float32{10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61} // row i: (10(i+1), 10(i+1)+1)
	d := &datasets.Dataset{Name: "six", X: x, Features: 2, Labels: []int{0, 1, 0, 1, 0, 1}, Classes: 2}
	rows := func(b []float32) []float32 {
		var firsts []float32
		for i := 0; i < len(b); i += 2 {
			if b[i+1] != b[i]+1 {
				t.Fatalf("row %d = (%g, %g), not a dataset row", i/2, b[i], b[i+1])
			}
			firsts = append(firsts, b[i])
		}
		slices.Sort(firsts)
		return firsts
	}
	all, err := FirstBatch(d, 6, 7)
	if err != nil {
		t.Fatal(err)
	}
	if s := all.Shape(); s[0] != 6 || s[1] != 2 {
		t.Fatalf("shape %v, want [6 2]", s)
	}
	if got, want := rows(all.Data().([]float32)), []float32{10, 20, 30, 40, 50, 60}; !slices.Equal(got, want) {
		t.Errorf("whole-dataset batch has rows %v, want every row once %v", got, want)
	}
	a, err := FirstBatch(d, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FirstBatch(d, 3, 7)
	if !slices.Equal(a.Data().([]float32), b.Data().([]float32)) {
		t.Errorf("same seed gave %v then %v", a.Data(), b.Data())
	}
	if got := rows(a.Data().([]float32)); len(slices.Compact(slices.Clone(got))) != 3 {
		t.Errorf("batch of 3 has rows %v, want 3 distinct rows", got)
	}
	if _, err := FirstBatch(nil, 3, 7); err == nil {
		t.Error("nil dataset: no error")
	}
}

// FirstBatch is batch 0 of epoch 0 of the training loader a run with the
// same seed uses (experiment.Loader, shuffled).
func TestFirstBatchIsTheTrainingLoaders(t *testing.T) {
	d := &datasets.Dataset{Name: "rows", Features: 1, X: []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Labels: make([]int, 10), Classes: 1}
	l, err := experiment.Loader(d, 4, true, 3)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := l.Batch(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, err := FirstBatch(d, 4, 3)
	if err != nil || !slices.Equal(tb.X.Data().([]float32), x.Data().([]float32)) {
		t.Errorf("first training batch %v, FirstBatch with the same seed %v (%v)", tb.X.Data(), x.Data(), err)
	}
}
