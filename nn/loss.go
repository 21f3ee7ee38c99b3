package nn

import (
	"fmt"

	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MSELoss is the mean squared error (torch.nn.MSELoss()).
func MSELoss(pred, target *G.Node) (*G.Node, error) { return fused.MSELoss(pred, target) }

// CrossEntropyLoss is the mean softmax cross-entropy of logits (rows ×
// classes) against integer labels (rows) stored as floats
// (torch.nn.CrossEntropyLoss()); fused.IgnoreIndex(i) leaves out the rows
// labelled i, as its ignore_index.
func CrossEntropyLoss(logits, labels *G.Node, opts ...fused.CEOption) (*G.Node, error) {
	return fused.CrossEntropy(logits, labels, opts...)
}

// BCEWithLogitsLoss is the mean binary cross-entropy on logits
// (torch.nn.BCEWithLogitsLoss()).
func BCEWithLogitsLoss(logits, targets *G.Node) (*G.Node, error) {
	return fused.BCEWithLogits(logits, targets)
}

// Accuracy counts the rows among the first n of logits (rows × classes)
// whose largest logit is at the label (ties go to the lowest class).
func Accuracy(logits *tensor.Dense, labels []int, n int) (correct int, err error) {
	if logits == nil || logits.Dims() != 2 {
		return 0, fmt.Errorf("nn.Accuracy: logits must be a matrix")
	}
	rows, classes := logits.Shape()[0], logits.Shape()[1]
	if n < 0 || n > rows || n > len(labels) {
		return 0, fmt.Errorf("nn.Accuracy: n = %d, want ≤ %d rows and ≤ %d labels", n, rows, len(labels))
	}
	at := func(i int) float64 {
		switch d := logits.Data().(type) {
		case []float32:
			return float64(d[i])
		case []float64:
			return d[i]
		}
		return 0
	}
	for r := 0; r < n; r++ {
		if labels[r] < 0 || labels[r] >= classes {
			return 0, fmt.Errorf("nn.Accuracy: label %d of row %d, want a class in [0, %d)", labels[r], r, classes)
		}
		best := 0
		for c := 1; c < classes; c++ {
			if at(r*classes+c) > at(r*classes+best) {
				best = c
			}
		}
		if best == labels[r] {
			correct++
		}
	}
	return correct, nil
}
