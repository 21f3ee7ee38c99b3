package train

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"gorgonia.org/tensor"
)

// ignoreTarget is the target id that is not scored (nanoGPT's
// ignore_index).
const ignoreTarget = -1

// Evaluation is a score of the model on a data set.
type Evaluation struct {
	// Loss is the mean cross-entropy over the targets scored
	// (classification; every position of every window for a language
	// model, as nanoGPT's estimate_loss) or the mean over rows of the
	// squared error per output (regression).
	Loss     float64
	Accuracy float64   // fraction of targets whose largest logit is the target; NaN for regression
	Targets  int       // targets scored: rows, or positions not ignored
	Rows     []float64 // each row's mean loss, in the data's order for epoch 0 (padding excluded; NaN for a row with every target ignored)
}

// Evaluate scores the current model on data with dropout off, without
// recording anything. Only the Size real rows of a batch count.
//
// data's batches may have any number of rows: each batch's real rows are
// fed to the model in chunks of the graph's rows, the last chunk filled
// up by repeating its own rows, which are computed and not scored.
// Evaluation needs no second compiled graph this way, because with
// dropout off no layer of package nn mixes the rows of a batch (they are
// separate examples, or separate sequences), so a row's output does not
// depend on its neighbours. Any other batch size gives the same scores up
// to the rounding of the matrix products, whose kernels may block a
// different number of rows differently.
func (t *Trainer) Evaluate(data Data) (Evaluation, error) {
	if t == nil || t.Machine == nil || t.feeds == nil {
		return Evaluation{}, errNotFromNew("Evaluate")
	}
	if t.EvalMachine == nil || t.Model.Target == nil {
		return Evaluation{}, fmt.Errorf("train.Evaluate: needs Model.Output and Model.Target")
	}
	if data = orNil(data); data == nil || data.NumBatches() <= 0 {
		return Evaluation{}, fmt.Errorf("train.Evaluate: nil data or no batches, want a data set such as datasets.NewLoader makes")
	}
	if _, err := t.checkData("train.Evaluate", data, "evaluation", false); err != nil {
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
	info := EvalInfo{Step: t.step, Epoch: t.epoch, TrainLoss: math.NaN(), TrainSteps: t.sinceN, ValLoss: math.NaN(), ValAccuracy: math.NaN()}
	if t.sinceN > 0 {
		info.TrainLoss = t.sinceSum / float64(t.sinceN)
	}
	t.sinceSum, t.sinceN = 0, 0
	if t.ValData != nil {
		var e Evaluation
		var err error
		if t.par != nil {
			e, err = t.scoreParallel(t.ValData)
		} else {
			e, err = t.score(t.ValData)
		}
		if err != nil {
			return fmt.Errorf("train: evaluation at step %d: %w", t.step, err)
		}
		info.ValLoss, info.ValAccuracy = e.Loss, e.Accuracy
	}
	t.result.Evals = append(t.result.Evals, info)
	if t.metrics != nil {
		if err := t.hold(t.metrics.eval(info, t.ValData != nil, t.ValData != nil && t.Model.Task == Classification)); err != nil {
			return err
		}
	}
	t.progress.eval(info)
	if err := t.watch(info); err != nil {
		return err
	}
	if t.Config.OnEval != nil {
		if err := t.Config.OnEval(t, info); err != nil {
			return t.hold(fmt.Errorf("train: OnEval at step %d: %w", t.step, err))
		}
	}
	return nil
}

// watch updates the best value of the monitored metric, writes
// best.safetensors when it improves, and sets t.stop when Patience has
// run out.
func (t *Trainer) watch(info EvalInfo) error {
	if !t.monitor.on {
		return nil
	}
	if v := t.monitor.get(info); t.monitor.better(v, t.best) {
		t.best, t.bestStep, t.stale = v, info.Step, 0
		if t.Config.SaveBest {
			var err error
			if t.writes() {
				err = t.saveWeights(filepath.Join(t.Config.Dir, bestFile), map[string]string{
					"step": fmt.Sprint(t.step), t.monitor.name: fmt.Sprint(v)})
			}
			if err := t.agree(err); err != nil {
				return fmt.Errorf("train: best model at step %d: %w", t.step, err)
			}
		}
	} else {
		t.stale++
	}
	if t.Config.Patience > 0 && t.stale >= t.Config.Patience {
		t.stop = true
	}
	return nil
}

// monitor is the validation metric that Patience and SaveBest watch.
type monitor struct {
	name   string
	higher bool // higher is better
	get    func(EvalInfo) float64
	on     bool // there is validation data: the best is tracked
}

var monitors = map[string]monitor{
	"val_loss":     {name: "val_loss", get: func(e EvalInfo) float64 { return e.ValLoss }},
	"val_accuracy": {name: "val_accuracy", higher: true, get: func(e EvalInfo) float64 { return e.ValAccuracy }},
}

func newMonitor(cfg Config, task Task, validation bool) (monitor, error) {
	name := cfg.Monitor
	if name == "" {
		name = "val_loss"
	}
	m, ok := monitors[name]
	if !ok {
		return m, fmt.Errorf("train.New: Monitor %q, want one of %s", cfg.Monitor, strings.Join(slices.Sorted(maps.Keys(monitors)), ", "))
	}
	if name == "val_accuracy" && task != Classification {
		return m, fmt.Errorf("train.New: Monitor %q needs Task Classification, the model's is %v", name, task)
	}
	m.on = validation
	return m, nil
}

// report is the best value for Result: NaN before any evaluation of the
// monitored metric.
func (m monitor) report(best float64, step int) float64 {
	if step < 0 {
		return math.NaN()
	}
	return best
}

// worst is the value every measurement improves on.
func (m monitor) worst() float64 {
	if m.higher {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

func (m monitor) better(v, best float64) bool {
	if m.higher {
		return v > best
	}
	return v < best
}

// score evaluates the model on every batch of epoch 0 of data.
func (t *Trainer) score(data Data) (Evaluation, error) {
	s, err := t.scoreBatches(data, 0, data.NumBatches())
	if err != nil {
		return Evaluation{}, err
	}
	return s.result(), nil
}

// scoreBatches scores batches [lo, hi) of epoch 0 of data.
func (t *Trainer) scoreBatches(data Data, lo, hi int) (*scorer, error) {
	g := t.Model.Graph
	g.SetTraining(false)
	defer g.SetTraining(true)
	s := &scorer{task: t.Model.Task}
	for i := lo; i < hi; i++ {
		b, err := data.Batch(0, i)
		if err != nil {
			return s, err
		}
		if err := t.feeds.check(b, false); err != nil {
			return s, fmt.Errorf("batch %d: %w", i, err)
		}
		y, _ := b.Field("y")
		for start := 0; start < b.Size; start += t.feeds.rows {
			n := min(t.feeds.rows, b.Size-start)
			if err := t.feeds.set(t.EvalMachine, b, start, n); err != nil {
				return s, err
			}
			if err := t.EvalMachine.Run(); err != nil {
				return s, err
			}
			v, err := t.EvalMachine.Value(t.Model.Output)
			if err != nil {
				return s, err
			}
			out, ok := v.(*tensor.Dense)
			if !ok {
				return s, fmt.Errorf("output %q is a %T, want a tensor", t.Model.Output.Name(), v)
			}
			if err := s.add(out, y, start, n); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

// scorer accumulates the scores of an evaluation's rows.
type scorer struct {
	task    Task
	rows    []float64
	sum     float64 // classification: the sum of the scored targets' losses
	targets int
	hits    int
	scores  []nn.LogitScore
}

// add scores the first n rows of out (the model's output on rows
// [start, start+n) of the batch) against those rows of the target field y.
func (s *scorer) add(out *tensor.Dense, y datasets.Field, start, n int) error {
	per := product(y.Shape[1:]) // targets per row
	if s.task == Regression {
		want := graph.Float64s(y.Values)[start*per : (start+n)*per]
		got := graph.Float64s(out)
		if len(got) < n*per {
			return fmt.Errorf("output %v has fewer than %d values for %d rows of %d targets", out.Shape(), n*per, n, per)
		}
		for r := range n {
			var sq float64
			for i := r * per; i < (r+1)*per; i++ {
				d := got[i] - want[i]
				sq += d * d
			}
			s.rows = append(s.rows, sq/float64(per))
		}
		return nil
	}
	ids := y.IDs[start*per : (start+n)*per]
	var err error
	if s.scores, err = nn.ScoreLogits(s.scores[:0], out, ids, ignoreTarget); err != nil {
		return err
	}
	next := s.scores
	for r := range n {
		var rowSum float64
		var rowN int
		for _, id := range ids[r*per : (r+1)*per] {
			if id == ignoreTarget {
				continue
			}
			sc := next[0]
			next = next[1:]
			rowSum += sc.Loss
			s.sum += sc.Loss
			rowN++
			if sc.Hit {
				s.hits++
			}
		}
		s.targets += rowN
		if rowN == 0 {
			s.rows = append(s.rows, math.NaN())
		} else {
			s.rows = append(s.rows, rowSum/float64(rowN))
		}
	}
	return nil
}

// partial is what the scorer adds to an evaluation sharded over ranks: the
// sum of the losses it averages, their number, and the hits among them.
func (s *scorer) partial() (sum, count, hits float64) {
	if s.task == Regression {
		for _, l := range s.rows {
			sum += l
		}
		return sum, float64(len(s.rows)), 0
	}
	return s.sum, float64(s.targets), float64(s.hits)
}

func (s *scorer) result() Evaluation {
	e := Evaluation{Loss: math.NaN(), Accuracy: math.NaN(), Rows: s.rows}
	if s.task == Regression {
		e.Targets = len(s.rows)
		if len(s.rows) > 0 {
			var sum float64
			for _, l := range s.rows {
				sum += l
			}
			e.Loss = sum / float64(len(s.rows))
		}
		return e
	}
	e.Targets = s.targets
	if s.targets > 0 {
		e.Loss = s.sum / float64(s.targets)
		e.Accuracy = float64(s.hits) / float64(s.targets)
	}
	return e
}
