package main

// Scoring a data set other than the trainer's validation loader (which here
// is the test set): the validation split and, with dropout, a training
// subset seen without dropout. train.Trainer scores only its own ValData, so
// this repeats its loop on the trainer's evaluation machine.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// score returns the mean cross-entropy (nats) and the error rate of the
// model on every example of l, with dropout off.
func score(t *train.Trainer, l *datasets.Loader) (loss, errRate float64, err error) {
	g := t.Model.Graph
	was := g.Training()
	g.SetTraining(false)
	defer g.SetTraining(was)
	var sum float64
	var wrong, n int
	for i := range l.NumBatches() {
		b, err := l.Batch(0, i)
		if err != nil {
			return 0, 0, err
		}
		if err := t.EvalMachine.Set(t.Model.Input, b.X); err != nil {
			return 0, 0, err
		}
		if err := t.EvalMachine.Run(); err != nil {
			return 0, 0, err
		}
		v, err := t.EvalMachine.Value(t.Model.Output)
		if err != nil {
			return 0, 0, err
		}
		logits, ok := v.(*tensor.Dense)
		if !ok || logits.Dims() != 2 {
			return 0, 0, fmt.Errorf("score: output %q holds %T, want a matrix of logits", t.Model.Output.Name(), v)
		}
		s, w := crossEntropy(logits, b.Labels, b.Size)
		sum, wrong, n = sum+s, wrong+w, n+b.Size
	}
	return sum / float64(n), float64(wrong) / float64(n), nil
}

// crossEntropy returns the summed cross-entropy of the first n rows of
// logits against labels and the number of rows whose largest logit (the
// first, on ties) is not at the label.
func crossEntropy(logits *tensor.Dense, labels []int, n int) (sum float64, wrong int) {
	classes := logits.Shape()[1]
	row := make([]float64, classes)
	for r := range n {
		switch d := logits.Data().(type) {
		case []float32:
			for c := range row {
				row[c] = float64(d[r*classes+c])
			}
		case []float64:
			copy(row, d[r*classes:(r+1)*classes])
		}
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		var z float64
		for _, v := range row {
			z += math.Exp(v - row[best])
		}
		sum += row[best] + math.Log(z) - row[labels[r]]
		if best != labels[r] {
			wrong++
		}
	}
	return sum, wrong
}
