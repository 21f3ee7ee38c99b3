package train

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"

	"gorgonia.org/tensor"
)

// Evaluation is a score of the model on a data set.
type Evaluation struct {
	Loss     float64   // mean cross-entropy (classification) or squared error per output (regression)
	Accuracy float64   // fraction of argmax hits; NaN for regression
	Rows     []float64 // each example's loss, in the loader's order for epoch 0 (padding excluded)
}

// Evaluate scores the current model on data with dropout off, without
// recording anything. Only the Size real rows of a padded batch count.
func (t *Trainer) Evaluate(data *datasets.Loader) (Evaluation, error) {
	if t == nil || t.Machine == nil {
		return Evaluation{}, errNotFromNew("Evaluate")
	}
	if t.EvalMachine == nil {
		return Evaluation{}, fmt.Errorf("train: Evaluate needs Model.Output")
	}
	if data == nil {
		return Evaluation{}, fmt.Errorf("train.Evaluate: nil data loader, want one from datasets.NewLoader")
	}
	if err := checkBatchFits("train.Evaluate", t.Model, data, "evaluation"); err != nil {
		return Evaluation{}, err
	}
	return t.score(data)
}

// evaluate scores the model on the validation data (dropout off), records
// the result and runs the OnEval hook, unless this step was evaluated.
func (t *Trainer) evaluate() error {
	if t.lastEval == t.step {
		return nil
	}
	t.lastEval = t.step
	info := EvalInfo{Step: t.step, Epoch: t.epoch, TrainLoss: math.NaN(), ValLoss: math.NaN(), ValAccuracy: math.NaN()}
	if t.sinceN > 0 {
		info.TrainLoss = t.sinceSum / float64(t.sinceN)
	}
	t.sinceSum, t.sinceN = 0, 0
	if t.ValData != nil {
		e, err := t.score(t.ValData)
		if err != nil {
			return fmt.Errorf("train: evaluation at step %d: %w", t.step, err)
		}
		info.ValLoss, info.ValAccuracy = e.Loss, e.Accuracy
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

func (t *Trainer) score(data *datasets.Loader) (Evaluation, error) {
	g := t.Model.Graph
	g.SetTraining(false)
	defer g.SetTraining(true)
	e := Evaluation{Accuracy: math.NaN()}
	var correct int
	for i := 0; i < data.NumBatches(); i++ {
		b, err := data.Batch(0, i)
		if err != nil {
			return e, err
		}
		if err := t.EvalMachine.Set(t.Model.Input, b.X); err != nil {
			return e, err
		}
		if err := t.EvalMachine.Run(); err != nil {
			return e, err
		}
		v, err := t.EvalMachine.Value(t.Model.Output)
		if err != nil {
			return e, err
		}
		out, ok := v.(*tensor.Dense)
		if !ok {
			return e, fmt.Errorf("output %q is a %T, want a tensor", t.Model.Output.Name(), v)
		}
		if e.Rows, correct, err = scoreBatch(t.Model.Task, out, b.Y, b.Labels, b.Size, e.Rows, correct); err != nil {
			return e, err
		}
	}
	if len(e.Rows) == 0 {
		return Evaluation{Loss: math.NaN(), Accuracy: math.NaN()}, nil
	}
	var sum float64
	for _, l := range e.Rows {
		sum += l
	}
	e.Loss = sum / float64(len(e.Rows))
	if t.Model.Task == Classification {
		e.Accuracy = float64(correct) / float64(len(e.Rows))
	}
	return e, nil
}

// scoreBatch appends the loss of each of the first n rows (cross-entropy,
// or squared error summed over the row's outputs divided by its width) to
// rows and adds the correct argmax predictions to correct.
func scoreBatch(task Task, out, y *tensor.Dense, labels []int, n int, rows []float64, correct int) ([]float64, int, error) {
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
			return rows, correct, fmt.Errorf("output shape %v differs from target shape %v", out.Shape(), y.Shape())
		}
		width := out.Shape().TotalSize() / out.Shape()[0]
		for r := 0; r < n; r++ {
			var s float64
			for i := r * width; i < (r+1)*width; i++ {
				d := at(out, i) - at(y, i)
				s += d * d
			}
			rows = append(rows, s/float64(width))
		}
		return rows, correct, nil
	}
	if out.Dims() != 2 || len(labels) < n {
		return rows, correct, fmt.Errorf("classification needs logits (rows × classes) and labels; got %v and %d labels", out.Shape(), len(labels))
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
			return rows, correct, fmt.Errorf("label %d of row %d is not a class in [0, %d)", labels[r], r, classes)
		}
		rows = append(rows, mx+math.Log(z)-at(out, r*classes+labels[r]))
		if best == labels[r] {
			correct++
		}
	}
	return rows, correct, nil
}
