package experiment

import (
	"slices"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

func TestSplitsLoaders(t *testing.T) {
	ds := func(n int) *datasets.Dataset {
		d := &datasets.Dataset{Name: "toy", Features: 1, Classes: 2}
		for i := range n {
			d.X, d.Labels = append(d.X, float32(i)), append(d.Labels, i%2)
		}
		return d
	}
	// 10 training rows in batches of 4: 2 whole batches (the last 2 rows
	// dropped); 7 test rows: 2 batches, the last partial; no validation split.
	s := Splits{Train: ds(10), Test: ds(7), TrainEval: ds(5)}
	l, err := s.Loaders(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if l.Train.NumBatches() != 2 || l.Test.NumBatches() != 2 || l.TrainEval.NumBatches() != 2 || l.Val != nil {
		t.Errorf("batches train %d test %d train-eval %d, val %v: want 2, 2, 2 and no val loader",
			l.Train.NumBatches(), l.Test.NumBatches(), l.TrainEval.NumBatches(), l.Val)
	}
	b, err := l.Test.Batch(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.X.Data().([]float32); !slices.Equal(got, []float32{0, 1, 2, 3}) {
		t.Errorf("first test batch %v, want rows in order [0 1 2 3]", got)
	}
	// The training batch is the seed's shuffle: what FirstBatch returns.
	tb, err := l.Train.Batch(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := FirstBatch(s.Train, 4, 3)
	if !slices.Equal(tb.X.Data().([]float32), x.Data().([]float32)) {
		t.Errorf("first training batch %v, FirstBatch with the same seed %v", tb.X.Data(), x.Data())
	}
	if _, err := (Splits{Train: ds(10), Test: ds(7)}).Loaders(0, 3); err == nil {
		t.Error("batch 0: no error")
	}
}
