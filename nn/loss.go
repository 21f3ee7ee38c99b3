package nn

import (
	"fmt"
	"math"

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
// whose largest logit is at the label (ties go to the lowest class), as
// ScoreLogits scores them.
func Accuracy(logits *tensor.Dense, labels []int, n int) (correct int, err error) {
	if logits == nil || logits.Dims() != 2 {
		return 0, fmt.Errorf("nn.Accuracy: logits must be a matrix")
	}
	if rows := logits.Shape()[0]; n < 0 || n > rows || n > len(labels) {
		return 0, fmt.Errorf("nn.Accuracy: n = %d, want ≤ %d rows and ≤ %d labels", n, rows, len(labels))
	}
	scores, err := ScoreLogits(nil, logits, labels[:n], math.MinInt)
	if err != nil {
		return 0, fmt.Errorf("nn.Accuracy: %w", err)
	}
	for _, s := range scores {
		if s.Hit {
			correct++
		}
	}
	return correct, nil
}
