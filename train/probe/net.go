package probe

// Driving a compiled training graph batch by batch for measurements: the
// gradients of a batch, a run of steps feeding a Watch and an optimizer,
// streams of batches from a Loader or a Sampler, and the accuracy on a
// test set. This is the loop of an experiment that looks inside training
// rather than only at its loss (train.Trainer is the loop that trains).

import (
	"fmt"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Net is a training graph compiled with a loss (graph.Compile), with the
// nodes a probe reads.
type Net struct {
	M             *graph.Machine
	Input, Target *G.Node
	Params        []graph.NamedTensor // g.ParamTensors(), in the machine's gradient order
	// Output (the logits, for Accuracy) and Pre (hidden pre-activations,
	// for Watch.WatchUnits) are optional; compile with graph.Keep on them
	// so that their values survive the run.
	Output *G.Node
	Pre    []*G.Node
}

// Grads runs one batch and returns the gradients, after checking that
// every value of the run is finite: the step train.Trainer takes
// (train.Gradients), without its optimizer. The tensors are the machine's, valid
// until its next run.
func (n *Net) Grads(x, y *tensor.Dense) ([]*tensor.Dense, error) {
	if err := n.check("Grads"); err != nil {
		return nil, err
	}
	_, grads, err := train.Gradients(n.M, n.Input, n.Target, x, y)
	return grads, err
}

// check reports a nil Net or one without a machine.
func (n *Net) check(method string) error {
	if n == nil || n.M == nil {
		return fmt.Errorf("probe.Net.%s: nil Net or no machine (Net.M)", method)
	}
	return nil
}

// Stream is an endless source of batches.
type Stream func() (x, y *tensor.Dense, err error)

// LoaderStream yields l's batches in order, epoch after epoch (each epoch
// shuffled as l shuffles it), from the first batch of epoch 0.
func LoaderStream(l *datasets.Loader) Stream {
	if l.NumBatches() == 0 { // also a nil Loader
		return func() (x, y *tensor.Dense, err error) {
			return nil, nil, fmt.Errorf("probe.LoaderStream: the loader is nil or has no batches")
		}
	}
	step := 0
	return func() (x, y *tensor.Dense, err error) {
		b, err := l.Batch(step/l.NumBatches(), step%l.NumBatches())
		step++
		return b.X, b.Y, err
	}
}

// Stream yields the sampler's batches (see Next).
func (s *Sampler) Stream() Stream {
	return func() (x, y *tensor.Dense, err error) { x, y, _ = s.Next(); return x, y, nil }
}

// Run runs steps batches of next: each step computes the gradients, feeds
// them to w (if not nil) and then steps opt (if not nil; without one the
// parameters stay frozen). It returns the mean loss over the steps (NaN
// for 0 steps, which run nothing). A step that fails (a non-finite loss or
// gradient, say) returns a *StepError saying which.
func (n *Net) Run(next Stream, steps int, w *Watch, opt optim.Optimizer) (meanLoss float64, err error) {
	if err := n.check("Run"); err != nil {
		return 0, err
	}
	if next == nil || steps < 0 {
		return 0, fmt.Errorf("probe.Net.Run: stream nil = %v and %d steps, want a stream and 0 or more steps", next == nil, steps)
	}
	return n.run("Run", next, 0, steps, steps, w, opt)
}

// StepError is the error of a training step that failed: Step of Steps
// (from 1) of the call that ran it (Run, Measure, TrainVariance).
type StepError struct {
	Op          string // the method, e.g. "probe.Net.Run"
	Step, Steps int
	Err         error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("%s: step %d of %d: %v", e.Op, e.Step, e.Steps, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// run runs steps batches as Run does, numbering them after the first
// `done` of a call of `total` steps by method op.
func (n *Net) run(op string, next Stream, done, steps, total int, w *Watch, opt optim.Optimizer) (float64, error) {
	var sum float64
	for i := done + 1; i <= done+steps; i++ {
		fail := func(err error) (float64, error) {
			return 0, &StepError{Op: "probe.Net." + op, Step: i, Steps: total, Err: err}
		}
		x, y, err := next()
		if err != nil {
			return 0, err
		}
		gs, err := n.Grads(x, y)
		if err != nil {
			return fail(err)
		}
		loss, err := n.M.Loss()
		if err != nil {
			return 0, err
		}
		sum += loss
		if w != nil {
			if _, err := w.Add(gs); err != nil {
				return fail(err)
			}
		}
		if opt != nil {
			if err := opt.Step(n.Params, gs); err != nil {
				return fail(err)
			}
		}
	}
	return sum / float64(steps), nil
}

// Accuracy returns the fraction of l's examples (epoch 0, without the
// padding rows of a last partial batch) whose largest output is their
// label. It runs the whole training graph, loss and gradients included,
// and changes no parameter.
func (n *Net) Accuracy(l *datasets.Loader) (float64, error) {
	if err := n.check("Accuracy"); err != nil {
		return 0, err
	}
	if n.Output == nil || l == nil {
		return 0, fmt.Errorf("probe.Net.Accuracy: no output node or no loader")
	}
	correct, total := 0, 0
	for i := 0; i < l.NumBatches(); i++ {
		b, err := l.Batch(0, i)
		if err != nil {
			return 0, err
		}
		if _, err := n.Grads(b.X, b.Y); err != nil {
			return 0, fmt.Errorf("probe.Net.Accuracy: batch %d: %w", i, err)
		}
		v, err := n.M.Value(n.Output)
		if err != nil {
			return 0, err
		}
		d, ok := v.(*tensor.Dense)
		if !ok {
			return 0, fmt.Errorf("probe.Net.Accuracy: output is a %T, want a tensor", v)
		}
		k, err := nn.Accuracy(d, b.Labels, b.Size)
		if err != nil {
			return 0, err
		}
		correct, total = correct+k, total+b.Size
	}
	return float64(correct) / float64(total), nil
}
