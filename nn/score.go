package nn

// Scoring logits after the fact, outside the graph: the one argmax and
// cross-entropy used by Accuracy and by the trainer's evaluation.

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// LogitScore is the score of one row of logits against its label.
type LogitScore struct {
	Loss float64 // softmax cross-entropy in nats: logsumexp(row) − row[label]
	Hit  bool    // the largest logit is at the label (ties go to the lowest class)
}

// ScoreLogits appends to dst the score of the first len(labels) rows of
// logits, a float32 or float64 tensor whose last dimension is the classes
// (rows × classes, or batch × T × classes read as batch·T rows). A label
// equal to ignore is not scored and appends nothing: pass −1 for
// nanoGPT's ignore_index, or a value no label takes (math.MinInt) to score
// every row. Any other label outside [0, classes) is an error naming its
// row. Everything is computed in float64: the log-sum-exp around the row's
// maximum, the first maximum as the prediction.
func ScoreLogits(dst []LogitScore, logits *tensor.Dense, labels []int, ignore int) ([]LogitScore, error) {
	if logits == nil || logits.Dims() < 2 {
		return dst, fmt.Errorf("nn.ScoreLogits: logits %v, want rows × classes", shapeOfDense(logits))
	}
	shape := logits.Shape()
	classes := shape[len(shape)-1]
	rows := shape.TotalSize() / max(classes, 1)
	if classes < 1 || len(labels) > rows {
		return dst, fmt.Errorf("nn.ScoreLogits: %d labels for logits %v (%d rows of %d classes), want at most one label per row", len(labels), shape, rows, classes)
	}
	switch d := logits.Data().(type) {
	case []float32:
		return scoreRows(dst, d, classes, labels, ignore)
	case []float64:
		return scoreRows(dst, d, classes, labels, ignore)
	}
	return dst, fmt.Errorf("nn.ScoreLogits: logits are %v, want float32 or float64", logits.Dtype())
}

func scoreRows[T float32 | float64](dst []LogitScore, x []T, classes int, labels []int, ignore int) ([]LogitScore, error) {
	for r, label := range labels {
		if label == ignore {
			continue
		}
		if label < 0 || label >= classes {
			return dst, fmt.Errorf("nn.ScoreLogits: label %d of row %d is not a class in [0, %d)", label, r, classes)
		}
		row := x[r*classes : (r+1)*classes]
		mx, best := math.Inf(-1), 0
		for c, v := range row {
			if float64(v) > mx {
				mx, best = float64(v), c
			}
		}
		var z float64
		for _, v := range row {
			z += math.Exp(float64(v) - mx)
		}
		dst = append(dst, LogitScore{Loss: mx + math.Log(z) - float64(row[label]), Hit: best == label})
	}
	return dst, nil
}

func shapeOfDense(t *tensor.Dense) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}
