package fused

// Layer normalization over the last dimension, fused:
//
//	forward   μ = mean(x), rstd = 1/√(var(x) + ε)   (per row, biased variance)
//	          x̂ = (x − μ)·rstd,  y = x̂·γ + β
//	backward  ĝ = g·γ
//	          dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂))
//	          dγ = Σ_rows g·x̂,   dβ = Σ_rows g
//
// μ and rstd are saved per row by the forward op (in float64 even for
// float32 data) and read by the backward ops, instead of being recomputed
// through a chain of broadcast nodes. Double backward through LayerNorm is
// not implemented (its backward ops report an error if differentiated).

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LayerNorm normalizes each row of x (rows × d) and applies the elementwise
// affine transform with gamma and beta (both (d), or both nil), like
// PyTorch's nn.LayerNorm(d, eps) on the last dimension.
func LayerNorm(x, gamma, beta *G.Node, eps float64) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.LayerNorm", "input", x); err != nil {
		return nil, err
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("fused.LayerNorm: eps = %v, want a finite value ≥ 0", eps)
	}
	if (gamma == nil) != (beta == nil) {
		return nil, fmt.Errorf("fused.LayerNorm: give both gamma and beta, or neither")
	}
	op := newLayerNorm(eps, gamma != nil)
	if gamma == nil {
		return opkit.Apply(op, x)
	}
	d := x.Shape()[1]
	if err := opkit.CheckVector("fused.LayerNorm", "gamma", gamma, d, x.Dtype()); err != nil {
		return nil, err
	}
	if err := opkit.CheckVector("fused.LayerNorm", "beta", beta, d, x.Dtype()); err != nil {
		return nil, err
	}
	return opkit.Apply(op, x, gamma, beta)
}

type layerNormOp struct {
	opkit.Base
	eps        float64
	affine     bool
	out        opkit.Buffer
	mean, rstd []float64 // per row, saved for the backward ops
	k32        layerNormKernel[float32]
	k64        layerNormKernel[float64]
}

// layerNormSig: the input, then gamma and beta when affine.
var layerNormSig = opkit.Signature{In: []int{2, 1, 1}, Required: 1, Out: 2}

func newLayerNorm(eps float64, affine bool) *layerNormOp {
	op := &layerNormOp{eps: eps, affine: affine}
	op.Base = opkit.Base{
		Name:     fmt.Sprintf("layernorm(eps=%g)", eps),
		Key:      fmt.Sprintf("ops.layernorm(%x,%t)", math.Float64bits(eps), affine),
		Dims:     layerNormSig.Dims(affine),
		Backward: op.backward,
	}
	return op
}

func (op *layerNormOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"input", "gamma", "beta"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	x, gamma, beta := in[0], in[1], in[2]
	if x.Dims() != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, x.Shape())
	}
	rows, d := x.Shape()[0], x.Shape()[1]
	if op.affine {
		if gamma.Shape().TotalSize() != d || beta.Shape().TotalSize() != d {
			return nil, fmt.Errorf("%v: gamma/beta sizes %d/%d, want %d", op, gamma.Shape().TotalSize(), beta.Shape().TotalSize(), d)
		}
	}
	if len(op.mean) != rows {
		op.mean, op.rstd = make([]float64, rows), make([]float64, rows)
	}
	out := op.out.Get(x.Dtype(), x.Shape())
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		layerNormForward(&op.k32, o, x.Float32s(), affineData[float32](gamma), affineData[float32](beta), op.mean, op.rstd, d, op.eps)
	case tensor.Float64:
		o := out.Float64s()
		layerNormForward(&op.k64, o, x.Float64s(), affineData[float64](gamma), affineData[float64](beta), op.mean, op.rstd, d, op.eps)
	}
	return out, nil
}

func affineData[T graph.Float](t *tensor.Dense) []T {
	if t == nil {
		return nil
	}
	return opkit.Elems[T](t)
}

// layerNormForward normalizes the rows of x into y on every core, with k as
// the loop body: the op keeps one per dtype, where a closure handed to
// parallel.For would be allocated on every run.
func layerNormForward[T graph.Float](k *layerNormKernel[T], y, x, gamma, beta []T, mean, rstd []float64, d int, eps float64) {
	*k = layerNormKernel[T]{y: y, x: x, gamma: gamma, beta: beta, mean: mean, rstd: rstd, d: d, eps: eps}
	parallel.For(len(mean), parallel.RowGrain(d), k)
	*k = layerNormKernel[T]{} // keep no tensor alive
}

type layerNormKernel[T graph.Float] struct {
	y, x, gamma, beta []T
	mean, rstd        []float64
	d                 int
	eps               float64
}

func (k *layerNormKernel[T]) Run(lo, hi int) {
	d := k.d
	r := lo
	for ; r+2 <= hi; r += 2 {
		k.mean[r], k.rstd[r], k.mean[r+1], k.rstd[r+1] = layerNormRow2(
			k.y[r*d:(r+1)*d], k.x[r*d:(r+1)*d], k.y[(r+1)*d:(r+2)*d], k.x[(r+1)*d:(r+2)*d], k.gamma, k.beta, k.eps)
	}
	for ; r < hi; r++ {
		k.mean[r], k.rstd[r] = LayerNormRow(k.y[r*d:(r+1)*d], k.x[r*d:(r+1)*d], k.gamma, k.beta, k.eps)
	}
}

// layerNormRow2 is LayerNormRow on two rows of the same length at once. A
// row's sums are chains of dependent float64 additions, each waiting for
// the one before; running two rows' chains side by side lets the core
// overlap them. Each row's operations and their order are LayerNormRow's,
// so the results are bit for bit the same.
func layerNormRow2[T graph.Float](ya, xa, yb, xb, gamma, beta []T, eps float64) (meanA, rstdA, meanB, rstdB float64) {
	d := len(xa)
	xb = xb[:d]
	var sa, sb float64
	for j, v := range xa {
		sa += float64(v)
		sb += float64(xb[j])
	}
	mua, mub := sa/float64(d), sb/float64(d)
	var ssa, ssb float64
	for j, v := range xa {
		ca := float64(v) - mua
		cb := float64(xb[j]) - mub
		ssa += ca * ca
		ssb += cb * cb
	}
	rsa := 1 / math.Sqrt(ssa/float64(d)+eps)
	rsb := 1 / math.Sqrt(ssb/float64(d)+eps)
	layerNormApply(ya, xa, gamma, beta, mua, rsa)
	layerNormApply(yb, xb, gamma, beta, mub, rsb)
	return mua, rsa, mub, rsb
}

// layerNormApply writes y = (x − mean)·rstd (·γ + β), rounded once.
func layerNormApply[T graph.Float](y, x, gamma, beta []T, mean, rstd float64) {
	for j, v := range x {
		xh := (float64(v) - mean) * rstd
		if gamma != nil {
			xh = xh*float64(gamma[j]) + float64(beta[j])
		}
		y[j] = T(xh)
	}
}

// LayerNormRow normalizes one row x into y (which may be x) as LayerNorm
// does, statistics in float64 and one rounding per output, and returns the
// row's mean and reciprocal standard deviation. gamma and beta are both
// nil (no affine part) or both as long as x.
func LayerNormRow[T graph.Float](y, x, gamma, beta []T, eps float64) (mean, rstd float64) {
	d := len(x)
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	mu := s / float64(d)
	var ss float64
	for _, v := range x {
		c := float64(v) - mu
		ss += c * c
	}
	rs := 1 / math.Sqrt(ss/float64(d)+eps)
	layerNormApply(y, x, gamma, beta, mu, rs)
	return mu, rs
}

// backward: dx from (x, g[, γ]), dγ from (x, g), dβ = Σ_rows g.
func (op *layerNormOp) backward(gs *opkit.Grads) {
	x, g := gs.Input(0), gs.Grad()
	if !op.affine {
		gs.Set(0, gs.Apply(newLayerNormGrad(op, false), x, g))
		return
	}
	gs.Set(0, gs.Apply(newLayerNormGrad(op, false), x, g, gs.Input(1)))
	gs.Set(1, gs.Apply(newLayerNormGrad(op, true), x, g))
	gs.Set(2, gs.Apply(newSumRows(), g))
}

// layerNormGradOp computes dx from (x, g[, γ]), or dγ from (x, g) when
// gamma is set, using the statistics saved by fwd.
type layerNormGradOp struct {
	opkit.Base
	fwd   *layerNormOp
	gamma bool
	out   opkit.Buffer
	acc   []float64 // dγ accumulated in float64, reused across runs
	k32   layerNormGradKernel[float32]
	k64   layerNormGradKernel[float64]
	g32   layerNormGammaKernel[float32]
	g64   layerNormGammaKernel[float64]
}

// dx takes the input and the gradient, then gamma when the forward op is
// affine; dγ takes the input and the gradient only.
var (
	layerNormDxSig     = opkit.Signature{In: []int{2, 2, 1}, Required: 2, Out: 2}
	layerNormDgammaSig = opkit.Signature{In: []int{2, 2}, Required: 2, Out: 1}
)

func newLayerNormGrad(fwd *layerNormOp, gamma bool) *layerNormGradOp {
	op := &layerNormGradOp{fwd: fwd, gamma: gamma}
	op.Base = opkit.Base{
		Name:     "layernorm.dx",
		Key:      fmt.Sprintf("ops.layernormgrad(%p,%t)", fwd, gamma),
		Dims:     layerNormDxSig.Dims(fwd.affine),
		Backward: opkit.NotImplemented("double backward through LayerNorm"),
	}
	if gamma {
		op.Name, op.Dims = "layernorm.dγ", layerNormDgammaSig.Dims(fwd.affine)
	}
	return op
}

func (op *layerNormGradOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	if op.gamma {
		return tensor.Shape{s[1]}, nil
	}
	return s.Clone(), nil
}

func (op *layerNormGradOp) Do(vs ...G.Value) (G.Value, error) {
	// The third input (gamma, when the input's gradient is wanted) is
	// read where it is used.
	in, err := opkit.Inputs(op, vs, []string{"input", "gradient", ""}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	x, g := in[0], in[1]
	if err := opkit.SameLayout(op, x, "gradient", g); err != nil {
		return nil, err
	}
	rows, d := x.Shape()[0], x.Shape()[1]
	if len(op.fwd.mean) != rows {
		return nil, fmt.Errorf("%v: the forward layer norm has not run on this input", op)
	}
	if op.gamma {
		out := op.out.Get(x.Dtype(), tensor.Shape{d})
		if len(op.acc) != d {
			op.acc = make([]float64, d)
		}
		switch out.Dtype() {
		case tensor.Float32:
			o := out.Float32s()
			layerNormGradGamma(&op.g32, o, x.Float32s(), g.Float32s(), op.fwd.mean, op.fwd.rstd, op.acc)
		case tensor.Float64:
			o := out.Float64s()
			layerNormGradGamma(&op.g64, o, x.Float64s(), g.Float64s(), op.fwd.mean, op.fwd.rstd, op.acc)
		}
		return out, nil
	}
	var gamma *tensor.Dense
	if op.fwd.affine {
		if gamma, err = opkit.Dense(op, "gamma", vs[2]); err != nil {
			return nil, err
		}
	}
	out := op.out.Get(x.Dtype(), x.Shape())
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		layerNormGradX(&op.k32, o, x.Float32s(), g.Float32s(), affineData[float32](gamma), op.fwd.mean, op.fwd.rstd)
	case tensor.Float64:
		o := out.Float64s()
		layerNormGradX(&op.k64, o, x.Float64s(), g.Float64s(), affineData[float64](gamma), op.fwd.mean, op.fwd.rstd)
	}
	return out, nil
}

// layerNormGradX computes dx from x, the upstream gradient g and gamma (nil
// without an affine part) on every core, with k as the loop body: the op
// keeps one per dtype, where a closure handed to parallel.For would be
// allocated on every run.
func layerNormGradX[T graph.Float](k *layerNormGradKernel[T], dx, x, g, gamma []T, mean, rstd []float64) {
	d := len(x) / len(mean)
	*k = layerNormGradKernel[T]{dx: dx, x: x, g: g, gamma: gamma, mean: mean, rstd: rstd, d: d}
	parallel.For(len(mean), parallel.RowGrain(d), k)
	*k = layerNormGradKernel[T]{} // keep no tensor alive
}

type layerNormGradKernel[T graph.Float] struct {
	dx, x, g, gamma []T
	mean, rstd      []float64
	d               int
}

func (k *layerNormGradKernel[T]) Run(lo, hi int) {
	x, g, dx, gamma, mean, rstd, d := k.x, k.g, k.dx, k.gamma, k.mean, k.rstd, k.d
	for r := lo; r < hi; r++ {
		xr, gr, out := x[r*d:(r+1)*d], g[r*d:(r+1)*d], dx[r*d:(r+1)*d]
		mu, rs := mean[r], rstd[r]
		var sg, sgx float64 // Σ ĝ and Σ ĝ·x̂
		for j, v := range xr {
			gh := float64(gr[j])
			if gamma != nil {
				gh *= float64(gamma[j])
			}
			sg += gh
			sgx += gh * (float64(v) - mu) * rs
		}
		mg, mgx := sg/float64(d), sgx/float64(d)
		for j, v := range xr {
			gh := float64(gr[j])
			if gamma != nil {
				gh *= float64(gamma[j])
			}
			xh := (float64(v) - mu) * rs
			out[j] = T(rs * (gh - mg - xh*mgx))
		}
	}
}

// layerNormGradGamma computes dγ = Σ_rows g·x̂, accumulated in float64 in
// acc, on every core with k as the loop body. The cores split the columns,
// and each column is summed from the first row to the last whatever the
// split, so the result does not depend on the number of cores.
func layerNormGradGamma[T graph.Float](k *layerNormGammaKernel[T], dgamma, x, g []T, mean, rstd, acc []float64) {
	*k = layerNormGammaKernel[T]{dgamma: dgamma, x: x, g: g, mean: mean, rstd: rstd, acc: acc}
	parallel.For(len(dgamma), max(sumRowsMinCols, parallel.RowGrain(len(mean))), k)
	*k = layerNormGammaKernel[T]{} // keep no tensor alive
}

type layerNormGammaKernel[T graph.Float] struct {
	dgamma, x, g    []T
	mean, rstd, acc []float64
}

// Run computes dγ for columns [lo, hi).
func (k *layerNormGammaKernel[T]) Run(lo, hi int) {
	d := len(k.dgamma)
	acc := k.acc[lo:hi]
	clear(acc)
	for r := range k.mean {
		xr, gr := k.x[r*d+lo:r*d+hi], k.g[r*d+lo:r*d+hi]
		mu, rs := k.mean[r], k.rstd[r]
		for j, v := range xr {
			acc[j] += float64(gr[j]) * (float64(v) - mu) * rs
		}
	}
	for j, a := range acc {
		k.dgamma[lo+j] = T(a)
	}
}
