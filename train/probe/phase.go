package probe

// The measurement phases of an experiment on a Net: a network built for
// probing, a window of steps watched by shadow buffers (and the network's
// own f'(z)), and gradient variance in blocks while training.

import (
	"fmt"
	"slices"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	G "gorgonia.org/gorgonia"
)

// NewNet compiles the training model m for probing: its loss with
// gradients, keeping the hidden pre-activations pre (nn.MLP.Pre) and the
// output, whose values Watch.WatchUnits and Accuracy read.
func NewNet(m train.Model, pre []*G.Node) (*Net, error) {
	if m.Graph == nil || m.Loss == nil {
		return nil, fmt.Errorf("probe.NewNet: the model has no graph or no loss")
	}
	n := &Net{Input: m.Input, Target: m.Target, Output: m.Output, Pre: slices.Clone(pre), Params: m.Graph.ParamTensors()}
	var err error
	n.M, err = m.Graph.Compile(m.Loss, graph.Keep(append(slices.Clone(n.Pre), n.Output)...))
	return n, err
}

// Phase says how Net.Measure watches a stretch of steps.
type Phase struct {
	Name        string          // copied to the Summary, to tell the phases apart
	Steps, Burn int             // steps recorded, after Burn steps that are not
	BlockLen    int             // recorded steps per block, for standard errors (NewWatch)
	Buffers     []Buffer        // the shadow buffers fed the gradients (none: gradients only)
	Opt         optim.Optimizer // steps the parameters; nil keeps them frozen
	Units       *Units          // if set, the network's f'(z) on the first UnitSteps steps (WatchUnits)
	UnitSteps   int
}

// Measure runs p.Burn + p.Steps batches of next (Run) under a Watch as p
// describes and returns what it recorded, named p.Name.
func (n *Net) Measure(next Stream, p Phase) (Summary, error) {
	if err := n.check("Measure"); err != nil {
		return Summary{}, err
	}
	w, err := NewWatch(n.Params, p.BlockLen, p.Burn, p.Buffers...)
	if err == nil && p.Units != nil {
		err = w.WatchUnits(p.Units, n.M, n.Pre, p.UnitSteps)
	}
	if err == nil {
		if next == nil || p.Burn+p.Steps < 0 {
			err = fmt.Errorf("probe.Net.Measure: stream nil = %v and %d steps, want a stream and 0 or more steps", next == nil, p.Burn+p.Steps)
		} else {
			_, err = n.run("Measure", next, 0, p.Burn+p.Steps, p.Burn+p.Steps, w, p.Opt)
		}
	}
	if err != nil {
		return Summary{Name: p.Name}, err
	}
	s, err := w.Summary()
	s.Name = p.Name
	return s, err
}

// VarianceBlocks is the gradient variance of training measured in
// consecutive blocks of steps (Net.TrainVariance), one value per block.
type VarianceBlocks struct {
	Ends []int     // the block's last step
	Var  []float64 // Σ_j Var(g_j) over the block
	Loss []float64 // the mean training loss over the block
}

// TrainVariance trains steps batches of next with opt and measures the
// gradients in consecutive blocks of block steps: for every complete
// block, its last step, Σ_j Var(g_j) over it and its mean loss. The steps
// after the last complete block are trained without measurement. A failed
// step's *StepError counts the steps from the first of the call.
func (n *Net) TrainVariance(next Stream, steps, block int, opt optim.Optimizer) (VarianceBlocks, error) {
	var b VarianceBlocks
	if err := n.check("TrainVariance"); err != nil {
		return b, err
	}
	if block < 2 || steps < 0 || next == nil {
		return b, fmt.Errorf("probe.Net.TrainVariance: %d steps in blocks of %d (stream nil = %v), want steps ≥ 0, blocks of 2 or more and a stream", steps, block, next == nil)
	}
	for step := block; step <= steps; step += block {
		w, _ := NewWatch(n.Params, 0, 0)
		loss, err := n.run("TrainVariance", next, step-block, block, steps, w, opt)
		if err != nil {
			return VarianceBlocks{}, err
		}
		s, err := w.Summary()
		if err != nil {
			return VarianceBlocks{}, err
		}
		b.Ends, b.Var, b.Loss = append(b.Ends, step), append(b.Var, s.All().Var), append(b.Loss, loss)
	}
	if rest := steps % block; rest > 0 {
		if _, err := n.run("TrainVariance", next, steps-rest, rest, steps, nil, opt); err != nil {
			return VarianceBlocks{}, err
		}
	}
	return b, nil
}
