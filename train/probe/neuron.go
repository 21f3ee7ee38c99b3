package probe

// The single neuron of the dying-neuron argument, L = ½(a(w·x + b) − t)²
// with one input: its gradients through the graph, and plain gradient
// descent on (w, b), which shows where z = w·x + b goes.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Neuron is L = ½(a(w·x + b) − t)² on its own graph, with x and t fixed
// and w, b its parameters.
type Neuron struct {
	X, T    float64
	g       *graph.Graph
	w, b    *G.Node
	machine *graph.Machine
}

// NewNeuron builds the neuron of activation a in dtype dt (Float32 or
// Float64) with input x, target t, weight w and the bias that makes
// z = w·x + b equal z0.
func NewNeuron(a activation.Activation, dt tensor.Dtype, x, w, z0, t float64) (*Neuron, error) {
	g, err := graph.New(dt, 0)
	if err != nil {
		return nil, fmt.Errorf("probe.NewNeuron: %w", err)
	}
	n := &Neuron{X: x, T: t, g: g}
	xn, _ := g.Input("x", 1)
	tn, _ := g.Input("t", 1)
	if n.w, err = g.Param("w", graph.Constant(w), 1); err != nil {
		return nil, err
	}
	if n.b, err = g.Param("b", graph.Constant(z0-w*x), 1); err != nil {
		return nil, err
	}
	loss, err := func() (l *G.Node, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("probe.NewNeuron: building the loss: %v", r)
			}
		}()
		z := G.Must(G.Add(G.Must(G.HadamardProd(n.w, xn)), n.b))
		y, err := a.Apply(z)
		if err != nil {
			return nil, err
		}
		d := G.Must(G.Sub(y, tn))
		half := G.NewConstant(0.5)
		if dt == tensor.Float32 {
			half = G.NewConstant(float32(0.5))
		}
		return G.Mul(half, G.Must(G.Sum(G.Must(G.HadamardProd(d, d)))))
	}()
	if err != nil {
		return nil, err
	}
	if n.machine, err = g.Compile(loss); err != nil {
		return nil, err
	}
	for _, in := range []struct {
		node *G.Node
		v    float64
	}{{xn, x}, {tn, t}} {
		v := tensor.New(tensor.Of(dt), tensor.WithShape(1))
		setScalar(v, in.v)
		if err := n.machine.Set(in.node, v); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Grads runs the graph and returns ∂L/∂w, ∂L/∂b and L.
func (n *Neuron) Grads() (dw, db, loss float64, err error) {
	if err = n.machine.Run(); err != nil {
		return
	}
	gw, err := n.machine.Grad(n.w)
	if err != nil {
		return
	}
	gb, err := n.machine.Grad(n.b)
	if err != nil {
		return
	}
	loss, err = n.machine.Loss()
	return scalar(gw), scalar(gb), loss, err
}

// Z returns w·x + b from the current parameters.
func (n *Neuron) Z() float64 {
	return scalar(n.w.Value().(*tensor.Dense))*n.X + scalar(n.b.Value().(*tensor.Dense))
}

// Descend takes steps steps of plain gradient descent (optim.SGD at
// learning rate lr) and returns z before every step and after the last
// (steps + 1 values), and the loss at the start and at the end.
func (n *Neuron) Descend(lr float64, steps int) (zs []float64, loss0, loss float64, err error) {
	opt := &optim.SGD{LearningRate: lr}
	for step := 0; step <= steps; step++ {
		zs = append(zs, n.Z())
		if _, _, loss, err = n.Grads(); err != nil {
			return nil, 0, 0, err
		}
		if step == 0 {
			loss0 = loss
		}
		if step == steps {
			break
		}
		gs, _ := n.machine.Grads()
		if err := opt.Step(n.g.ParamTensors(), gs); err != nil {
			return nil, 0, 0, err
		}
	}
	return zs, loss0, loss, nil
}

func setScalar(t *tensor.Dense, v float64) {
	switch d := t.Data().(type) {
	case []float32:
		d[0] = float32(v)
	case []float64:
		d[0] = v
	}
}

func scalar(t *tensor.Dense) float64 {
	switch d := t.Data().(type) {
	case []float32:
		return float64(d[0])
	case []float64:
		return d[0]
	}
	return math.NaN()
}
