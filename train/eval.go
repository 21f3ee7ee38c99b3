package train

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"

	"gorgonia.org/tensor"
)

// evaluate scores the model on the validation data (dropout off), records
// the result and runs the OnEval hook. Only the Size real rows of a padded
// last batch count.
func (t *Trainer) evaluate() error {
	info := EvalInfo{Step: t.step, Epoch: t.epoch, TrainLoss: math.NaN(), ValLoss: math.NaN(), ValAccuracy: math.NaN()}
	if t.sinceN > 0 {
		info.TrainLoss = t.sinceSum / float64(t.sinceN)
	}
	t.sinceSum, t.sinceN = 0, 0
	if t.ValData != nil {
		var err error
		if info.ValLoss, info.ValAccuracy, err = t.score(); err != nil {
			return fmt.Errorf("train: evaluation at step %d: %w", t.step, err)
		}
	}
	t.result.Evals = append(t.result.Evals, info)
	if t.metrics != nil {
		if err := t.metrics.eval(info); err != nil {
			return err
		}
	}
	t.progress.eval(info)
	if t.Config.OnEval != nil {
		if err := t.Config.OnEval(t, info); err != nil {
			return fmt.Errorf("train: OnEval at step %d: %w", t.step, err)
		}
	}
	return nil
}

func (t *Trainer) score() (loss, accuracy float64, err error) {
	g := t.Model.Graph
	g.SetTraining(false)
	defer g.SetTraining(true)
	var sum float64
	var correct, rows int
	for i := 0; i < t.ValData.NumBatches(); i++ {
		b, err := t.ValData.Batch(0, i)
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
		out, ok := v.(*tensor.Dense)
		if !ok {
			return 0, 0, fmt.Errorf("output %q is a %T, want a tensor", t.Model.Output.Name(), v)
		}
		s, c, err := scoreBatch(t.Model.Task, out, b.Y, b.Labels, b.Size)
		if err != nil {
			return 0, 0, err
		}
		sum, correct, rows = sum+s, correct+c, rows+b.Size
	}
	if rows == 0 {
		return math.NaN(), math.NaN(), nil
	}
	if t.Model.Task == Regression {
		return sum / float64(rows), math.NaN(), nil
	}
	return sum / float64(rows), float64(correct) / float64(rows), nil
}

// scoreBatch returns the summed loss over the first n rows (cross-entropy
// per row, or squared error summed over each row's outputs divided by the
// row width) and the number of correct argmax predictions.
func scoreBatch(task Task, out, y *tensor.Dense, labels []int, n int) (sum float64, correct int, err error) {
	at := func(t *tensor.Dense, i int) float64 {
		switch d := t.Data().(type) {
		case []float32:
			return float64(d[i])
		case []float64:
			return d[i]
		}
		return math.NaN()
	}
	if task == Regression {
		if !graph.SameShape(out.Shape(), y.Shape()) {
			return 0, 0, fmt.Errorf("output shape %v differs from target shape %v", out.Shape(), y.Shape())
		}
		width := out.Shape().TotalSize() / out.Shape()[0]
		for i := 0; i < n*width; i++ {
			d := at(out, i) - at(y, i)
			sum += d * d / float64(width)
		}
		return sum, 0, nil
	}
	if out.Dims() != 2 || len(labels) < n {
		return 0, 0, fmt.Errorf("classification needs logits (rows × classes) and labels; got %v and %d labels", out.Shape(), len(labels))
	}
	classes := out.Shape()[1]
	for r := 0; r < n; r++ {
		mx, best := math.Inf(-1), 0
		for c := 0; c < classes; c++ {
			if v := at(out, r*classes+c); v > mx {
				mx, best = v, c
			}
		}
		var z float64
		for c := 0; c < classes; c++ {
			z += math.Exp(at(out, r*classes+c) - mx)
		}
		if labels[r] < 0 || labels[r] >= classes {
			return 0, 0, fmt.Errorf("label %d of row %d is not a class in [0, %d)", labels[r], r, classes)
		}
		sum += mx + math.Log(z) - at(out, r*classes+labels[r])
		if best == labels[r] {
			correct++
		}
	}
	return sum, correct, nil
}
