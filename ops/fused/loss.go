package fused

// Losses with PyTorch's default mean reduction, each a fused op with its own
// backward (n = number of elements, m = number of rows, G = upstream scalar):
//
//	MSELoss(p, t)          = Σ(p−t)²/n                    dp = 2(p−t)·G/n,   dt = −dp
//	CrossEntropy(z, y)     = Σ_i (logsumexp(z_i) − z_iy)/m  dz = (softmax(z) − onehot(y))·G/m
//	                         (with IgnoreIndex, over the m rows not ignored;
//	                         ignored rows get dz = 0)
//	BCEWithLogits(z, t)    = Σ max(z,0) − z·t + log(1+e^−|z|) over n
//	                                                      dz = (σ(z) − t)·G/n, dt = −z·G/n
//
// Sums are accumulated in float64. The backward ops are not differentiable
// again; build the loss from gorgonia ops if you need its second derivative.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type lossKind int

const (
	lossMSE lossKind = iota
	lossCE
	lossBCE
)

func (k lossKind) String() string {
	return [...]string{"mse_loss", "cross_entropy", "bce_with_logits"}[k]
}

// MSELoss returns the mean squared error between pred and target (same
// shape and dtype).
func MSELoss(pred, target *G.Node) (*G.Node, error) {
	return applyLoss(lossMSE, pred, target, ceConfig{})
}

// CrossEntropy returns the mean over rows of −log softmax(logits)[label]
// for logits (rows × classes) and labels (rows) holding integer class
// indices as floats, PyTorch's F.cross_entropy. Labels outside
// [0, classes) or not integers are a run time error naming the row.
//
// With IgnoreIndex(i), rows whose label is i are left out, as PyTorch's
// ignore_index: the loss is the mean over the rows not ignored and the
// ignored rows get no gradient. When every row is ignored the loss is 0
// and so is its gradient (PyTorch 1.13 returns NaN, 0/0, which poisons
// the parameters at the next optimizer step; here such a batch changes
// nothing).
func CrossEntropy(logits, labels *G.Node, opts ...CEOption) (*G.Node, error) {
	var c ceConfig
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("ops.cross_entropy: option %d is nil", i)
		}
		o(&c)
	}
	return applyLoss(lossCE, logits, labels, c)
}

// CEOption configures CrossEntropy.
type CEOption func(*ceConfig)

type ceConfig struct {
	ignore   int
	ignoring bool
}

// IgnoreIndex leaves out the rows whose label is i (PyTorch's
// ignore_index; nanoGPT pads targets with −1 and passes ignore_index=−1).
// i need not be a class: −1 is the usual choice.
func IgnoreIndex(i int) CEOption {
	return func(c *ceConfig) { c.ignore, c.ignoring = i, true }
}

// BCEWithLogits returns the mean binary cross-entropy between sigmoid(logits)
// and targets in [0, 1] (same shape), computed stably from the logits.
func BCEWithLogits(logits, targets *G.Node) (*G.Node, error) {
	return applyLoss(lossBCE, logits, targets, ceConfig{})
}

func applyLoss(kind lossKind, pred, target *G.Node, ce ceConfig) (*G.Node, error) {
	name := "ops." + kind.String()
	if err := opkit.CheckFloatTensor(name, "prediction", pred); err != nil {
		return nil, err
	}
	if err := opkit.CheckFloatTensor(name, "target", target); err != nil {
		return nil, err
	}
	if kind == lossCE {
		if pred.Dims() != 2 || target.Dims() != 1 || target.Shape()[0] != pred.Shape()[0] {
			return nil, fmt.Errorf("%s: logits %q %v and labels %q %v, want (rows × classes) and (rows)", name, pred.Name(), pred.Shape(), target.Name(), target.Shape())
		}
		if pred.Dtype() != target.Dtype() {
			return nil, fmt.Errorf("%s: logits are %v but labels %v", name, pred.Dtype(), target.Dtype())
		}
	} else if err := opkit.CheckSameType(name, pred, target); err != nil {
		return nil, err
	}
	return opkit.Apply(newLoss(kind, pred.Dims(), target.Dims(), ce), pred, target)
}

type lossOp struct {
	opkit.Base
	kind                 lossKind
	predDims, targetDims int
	ce                   ceConfig
	out                  opkit.ScalarBuffer
}

func newLoss(kind lossKind, predDims, targetDims int, ce ceConfig) *lossOp {
	op := &lossOp{kind: kind, predDims: predDims, targetDims: targetDims, ce: ce}
	op.Base = opkit.Base{
		Name: kind.String(), Key: fmt.Sprintf("ops.loss(%d%s)", kind, ce.key()), Dims: []int{predDims, targetDims, 0},
		// integer labels get no gradient
		WRT: []bool{true, kind != lossCE}, Backward: op.backward,
	}
	if ce.ignoring {
		op.Name = fmt.Sprintf("%s(ignore_index=%d)", kind, ce.ignore)
	}
	return op
}

// key is the part of an op's hash key the options make ("" without any).
func (c ceConfig) key() string {
	if !c.ignoring {
		return ""
	}
	return fmt.Sprintf(",ignore=%d", c.ignore)
}

func (op *lossOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *lossOp) Do(vs ...G.Value) (G.Value, error) {
	p, t, err := lossInputs(op, vs, 2)
	if err != nil {
		return nil, err
	}
	var l float64
	switch p.Dtype() {
	case tensor.Float32:
		pd := p.Float32s()
		l, err = lossValue(op.kind, pd, t.Float32s(), p.Shape(), op.ce)
	case tensor.Float64:
		pd := p.Float64s()
		l, err = lossValue(op.kind, pd, t.Float64s(), p.Shape(), op.ce)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return op.out.Set(p.Dtype(), l), nil
}

func lossInputs(op fmt.Stringer, vs []G.Value, arity int) (p, t *tensor.Dense, err error) {
	// The loss's backward has the upstream gradient, a scalar, as third
	// input; it reads that itself.
	in, err := opkit.Inputs(op, vs, []string{"prediction", "target", ""}[:arity]...)
	if err != nil {
		return nil, nil, err
	}
	p, t = in[0], in[1]
	if p.Dtype() != t.Dtype() {
		return nil, nil, fmt.Errorf("%v: prediction is %v, target %v", op, p.Dtype(), t.Dtype())
	}
	return p, t, nil
}

func lossValue[T graph.Float](kind lossKind, p, t []T, shape tensor.Shape, ce ceConfig) (float64, error) {
	var s float64
	switch kind {
	case lossMSE:
		for i, v := range p {
			d := float64(v) - float64(t[i])
			s += d * d
		}
		return s / float64(len(p)), nil
	case lossBCE:
		for i, v := range p {
			z := float64(v)
			s += math.Max(z, 0) - z*float64(t[i]) + math.Log1p(math.Exp(-math.Abs(z)))
		}
		return s / float64(len(p)), nil
	}
	rows, classes := shape[0], shape[1]
	counted := 0
	for r := 0; r < rows; r++ {
		y, err := classOf(ce, t[r], r, classes)
		if err != nil {
			return 0, err
		}
		if y < 0 {
			continue // ignored
		}
		row := p[r*classes : (r+1)*classes]
		s += logSumExp(row) - float64(row[y])
		counted++
	}
	if counted == 0 {
		return 0, nil // every row ignored
	}
	return s / float64(counted), nil
}

// classOf returns the class of a row's label, or −1 when the row is
// ignored.
func classOf[T graph.Float](c ceConfig, label T, row, classes int) (int, error) {
	y := float64(label)
	if c.ignoring && y == float64(c.ignore) {
		return -1, nil
	}
	if y != math.Trunc(y) || y < 0 || y >= float64(classes) {
		if c.ignoring {
			return 0, fmt.Errorf("label of row %d is %v, want an integer class in [0, %d) or the ignore_index %d", row, y, classes, c.ignore)
		}
		return 0, fmt.Errorf("label of row %d is %v, want an integer class in [0, %d)", row, y, classes)
	}
	return int(y), nil
}

func logSumExp[T graph.Float](row []T) float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	if math.IsInf(mx, 0) {
		return mx
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(s)
}

func (op *lossOp) backward(gs *opkit.Grads) {
	args := []opkit.Ref{gs.Input(0), gs.Input(1), gs.Grad()}
	gs.Set(0, gs.Apply(newLossGrad(op, false), args...))
	if op.kind != lossCE {
		gs.Set(1, gs.Apply(newLossGrad(op, true), args...))
	}
}

// lossGradOp computes the gradient with respect to the prediction (or, with
// target set, the target) from (prediction, target, G).
type lossGradOp struct {
	opkit.Base
	kind   lossKind
	target bool
	ce     ceConfig
	out    opkit.Buffer
	mse32  mseGradBody[float32]
	mse64  mseGradBody[float64]
}

func newLossGrad(fwd *lossOp, target bool) *lossGradOp {
	op := &lossGradOp{kind: fwd.kind, target: target, ce: fwd.ce}
	op.Base = opkit.Base{
		Name: fwd.kind.String() + ".dinput", Key: fmt.Sprintf("ops.lossgrad(%d,%t%s)", fwd.kind, target, fwd.ce.key()),
		Dims:     []int{fwd.predDims, fwd.targetDims, 0, fwd.predDims},
		Backward: opkit.NotImplemented("double backward through " + fwd.kind.String() + " (compose the loss from gorgonia ops for second derivatives)"),
	}
	if target {
		op.Name, op.ShapeOf, op.Dims[3] = fwd.kind.String()+".dtarget", 1, fwd.targetDims
	}
	return op
}

func (op *lossGradOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *lossGradOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	p, t, err := lossInputs(op, vs, 3)
	if err != nil {
		return nil, err
	}
	g, err := opkit.ScalarValue(op, "upstream gradient", vs[2])
	if err != nil {
		return nil, err
	}
	shape := p.Shape()
	if op.target {
		shape = t.Shape()
	}
	out, err := op.out.Use(op, prealloc, p.Dtype(), shape)
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		err = lossGrad(op.kind, op.target, o, p.Float32s(), t.Float32s(), p.Shape(), g, &op.mse32, op.ce)
	case tensor.Float64:
		o := out.Float64s()
		err = lossGrad(op.kind, op.target, o, p.Float64s(), t.Float64s(), p.Shape(), g, &op.mse64, op.ce)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return out, nil
}

// mseGradBody is MSE's gradient c·(p − t) as a parallel loop body, kept by
// the op so that nothing is allocated per call. Each element is computed
// alone, so the split among cores does not change any result.
type mseGradBody[T graph.Float] struct {
	out, p, t []T
	c         float64
}

// Run computes elements [lo, hi).
func (b *mseGradBody[T]) Run(lo, hi int) {
	out, p, t := b.out[lo:hi], b.p[lo:hi], b.t[lo:hi]
	for i, v := range p {
		out[i] = T(b.c * (float64(v) - float64(t[i])))
	}
}

// lossGrad writes the loss's gradient into out; the MSE case runs on every
// core through mse.
func lossGrad[T graph.Float](kind lossKind, wrtTarget bool, out, p, t []T, shape tensor.Shape, g float64, mse *mseGradBody[T], ce ceConfig) error {
	switch kind {
	case lossMSE:
		c := 2 * g / float64(len(p))
		if wrtTarget {
			c = -c
		}
		mse.out, mse.p, mse.t, mse.c = out[:len(p)], p, t[:len(p)], c
		parallel.For(len(p), parallel.MinGrain, mse)
		mse.out, mse.p, mse.t = nil, nil, nil
	case lossBCE:
		c := g / float64(len(p))
		for i, v := range p {
			z := float64(v)
			if wrtTarget {
				out[i] = T(-c * z)
			} else {
				out[i] = T(c * (SigmoidOf(z) - float64(t[i])))
			}
		}
	case lossCE:
		rows, classes := shape[0], shape[1]
		counted := rows
		if ce.ignoring {
			counted = 0
			for r := 0; r < rows; r++ {
				if float64(t[r]) != float64(ce.ignore) {
					counted++
				}
			}
		}
		c := g / float64(max(counted, 1))
		for r := 0; r < rows; r++ {
			y, err := classOf(ce, t[r], r, classes)
			if err != nil {
				return err
			}
			row, o := p[r*classes:(r+1)*classes], out[r*classes:(r+1)*classes]
			if y < 0 {
				clear(o) // ignored
				continue
			}
			lse := logSumExp(row)
			for j, v := range row {
				pj := math.Exp(float64(v) - lse)
				if j == y {
					pj--
				}
				o[j] = T(c * pj)
			}
		}
	}
	return nil
}

// SigmoidOf is σ(z) = 1/(1+e^−z) without overflow, as Sigmoid and
// BCEWithLogits compute it.
func SigmoidOf(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
