package fused

// Layer normalization over the last dimension, fused:
//
//	forward   μ = mean(x), rstd = 1/√(var(x) + ε)   (per row, biased variance)
//	          x̂ = (x − μ)·rstd,  y = x̂·γ + β
//	backward  ĝ = g·γ
//	          dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂))
//	          dγ = Σ_rows g·x̂,   dβ = Σ_rows g
//
// μ and rstd (in float64 even for float32 data) are a node of their own,
// the statistics (2 × rows): the op that normalizes and the backward ops
// take it as an input, instead of recomputing it through a chain of
// broadcast nodes or reading it out of another op's value. The normalizing
// op's derivative with respect to x is the whole one (through μ and rstd
// too), so the statistics get no gradient. Double backward through
// LayerNorm is not implemented (its backward ops report an error if
// differentiated).

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LayerNorm normalizes each row of x (rows × d) and applies the elementwise
// affine transform with gamma and beta (both (d)), like PyTorch's
// nn.LayerNorm(d, eps) on the last dimension. beta may be nil (PyTorch's
// bias=False), or both may be nil (elementwise_affine=False).
func LayerNorm(x, gamma, beta *G.Node, eps float64) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.LayerNorm", "input", x); err != nil {
		return nil, err
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("fused.LayerNorm: eps = %v, want a finite value ≥ 0", eps)
	}
	if gamma == nil && beta != nil {
		return nil, fmt.Errorf("fused.LayerNorm: beta without gamma; give gamma alone, both, or neither")
	}
	d := x.Shape()[1]
	inputs := []*G.Node{x, nil}
	for _, p := range []struct {
		role string
		n    *G.Node
	}{{"gamma", gamma}, {"beta", beta}} {
		if p.n == nil {
			continue
		}
		if err := opkit.CheckVector("fused.LayerNorm", p.role, p.n, d, x.Dtype()); err != nil {
			return nil, err
		}
		inputs = append(inputs, p.n)
	}
	stats, err := opkit.Apply(newLayerNormStats(eps), x)
	if err != nil {
		return nil, err
	}
	inputs[1] = stats
	return opkit.Apply(newLayerNorm(eps, len(inputs)-2), inputs...)
}

// float64Matrix is the type of the statistics node whatever the data's.
var float64Matrix = G.TensorType{Dims: 2, Of: tensor.Float64}

// layerNormStatsOp computes the statistics of each row of x: μ in row 0,
// rstd in row 1 of its (2 × rows) float64 result.
type layerNormStatsOp struct {
	opkit.Base
	eps float64
	out opkit.Buffer
	k32 layerNormStatsKernel[float32]
	k64 layerNormStatsKernel[float64]
}

func newLayerNormStats(eps float64) *layerNormStatsOp {
	op := &layerNormStatsOp{eps: eps}
	op.Base = opkit.Base{
		Name: fmt.Sprintf("layernorm.stats(eps=%g)", eps),
		Key:  fmt.Sprintf("ops.layernormstats(%x)", math.Float64bits(eps)),
		Dims: []int{2, 2}, WRT: []bool{false},
	}
	return op
}

// Type: a matrix of any float type → a float64 matrix.
func (op *layerNormStatsOp) Type() hm.Type {
	return hm.NewFnType(G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}, float64Matrix)
}

func (op *layerNormStatsOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	if len(s) != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, s)
	}
	return tensor.Shape{2, s[0]}, nil
}

func (op *layerNormStatsOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the statistics into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *layerNormStatsOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Dims() != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, x.Shape())
	}
	rows, d := x.Shape()[0], x.Shape()[1]
	var shape [2]int
	shape[0], shape[1] = 2, rows
	out, err := op.out.Use(op, prealloc, tensor.Float64, shape[:])
	if err != nil {
		return nil, err
	}
	st := out.Float64s()
	switch x.Dtype() {
	case tensor.Float32:
		layerNormStats(&op.k32, x.Float32s(), st[:rows], st[rows:], d, op.eps)
	case tensor.Float64:
		layerNormStats(&op.k64, x.Float64s(), st[:rows], st[rows:], d, op.eps)
	}
	return out, nil
}

// layerNormStats computes the rows' μ and rstd on every core, with k as
// the loop body: the op keeps one per dtype, where a closure handed to
// parallel.For would be allocated on every run.
func layerNormStats[T graph.Float](k *layerNormStatsKernel[T], x []T, mean, rstd []float64, d int, eps float64) {
	*k = layerNormStatsKernel[T]{x: x, mean: mean, rstd: rstd, d: d, eps: eps}
	parallel.For(len(mean), parallel.RowGrain(d), k)
	*k = layerNormStatsKernel[T]{} // keep no tensor alive
}

type layerNormStatsKernel[T graph.Float] struct {
	x          []T
	mean, rstd []float64
	d          int
	eps        float64
}

func (k *layerNormStatsKernel[T]) Run(lo, hi int) {
	d := k.d
	r := lo
	for ; r+2 <= hi; r += 2 {
		k.mean[r], k.rstd[r], k.mean[r+1], k.rstd[r+1] = rowStats2(k.x[r*d:(r+1)*d], k.x[(r+1)*d:(r+2)*d], k.eps)
	}
	for ; r < hi; r++ {
		k.mean[r], k.rstd[r] = rowStats(k.x[r*d:(r+1)*d], k.eps)
	}
}

// rowStats returns a row's mean and reciprocal standard deviation, in
// float64.
func rowStats[T graph.Float](x []T, eps float64) (mean, rstd float64) {
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
	return mu, 1 / math.Sqrt(ss/float64(d)+eps)
}

// rowStats2 is rowStats of two rows of the same length at once. A row's
// sums are chains of dependent float64 additions, each waiting for the one
// before; running two rows' chains side by side lets the core overlap
// them. Each row's operations and their order are rowStats', so the
// results are bit for bit the same.
func rowStats2[T graph.Float](xa, xb []T, eps float64) (meanA, rstdA, meanB, rstdB float64) {
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
	return mua, 1 / math.Sqrt(ssa/float64(d)+eps), mub, 1 / math.Sqrt(ssb/float64(d)+eps)
}

// layerNormOp normalizes x with its statistics: y = x̂·γ + β, from
// (x, stats[, γ[, β]]).
type layerNormOp struct {
	opkit.Base
	affine int // how many of γ and β it takes: 0, 1 (γ) or 2
	out    opkit.Buffer
	k32    layerNormKernel[float32]
	k64    layerNormKernel[float64]
}

func newLayerNorm(eps float64, affine int) *layerNormOp {
	op := &layerNormOp{affine: affine}
	op.Base = opkit.Base{
		Name:     fmt.Sprintf("layernorm(eps=%g)", eps),
		Key:      fmt.Sprintf("ops.layernorm(%d)", affine),
		Dims:     append([]int{2, 2, 1, 1}[:2+affine:2+affine], 2), // x, stats, γ, β → y
		WRT:      []bool{true, false, true, true}[:2+affine],
		Backward: op.backward,
	}
	return op
}

// Type: x, the float64 statistics, then γ and β of x's type → x's type.
func (op *layerNormOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := []hm.Type{G.TensorType{Dims: 2, Of: a}, float64Matrix}
	for range op.affine {
		ts = append(ts, G.TensorType{Dims: 1, Of: a})
	}
	return hm.NewFnType(append(ts, G.TensorType{Dims: 2, Of: a})...)
}

func (op *layerNormOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *layerNormOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"input", "statistics", "gamma", "beta"}[:2+op.affine]...)
	if err != nil {
		return nil, err
	}
	x, gamma, beta := in[0], in[2], in[3]
	if x.Dims() != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, x.Shape())
	}
	rows, d := x.Shape()[0], x.Shape()[1]
	mean, rstd, err := statsOf(op, in[1], rows)
	if err != nil {
		return nil, err
	}
	for _, p := range [...]*tensor.Dense{gamma, beta} {
		if p != nil && (p.Shape().TotalSize() != d || p.Dtype() != x.Dtype()) {
			return nil, fmt.Errorf("%v: gamma or beta is %v%v, want %v(%d)", op, p.Dtype(), p.Shape(), x.Dtype(), d)
		}
	}
	out, err := op.out.Use(op, prealloc, x.Dtype(), x.Shape())
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		layerNormForward(&op.k32, o, x.Float32s(), affineData[float32](gamma), affineData[float32](beta), mean, rstd, d)
	case tensor.Float64:
		o := out.Float64s()
		layerNormForward(&op.k64, o, x.Float64s(), affineData[float64](gamma), affineData[float64](beta), mean, rstd, d)
	}
	return out, nil
}

// statsOf checks the statistics input at run time and returns μ and rstd.
func statsOf(op fmt.Stringer, st *tensor.Dense, rows int) (mean, rstd []float64, err error) {
	if st.Dtype() != tensor.Float64 || st.Shape().TotalSize() != 2*rows {
		return nil, nil, fmt.Errorf("%v: statistics are %v%v, want float64 (2, %d)", op, st.Dtype(), st.Shape(), rows)
	}
	s := st.Float64s()
	return s[:rows], s[rows:], nil
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
func layerNormForward[T graph.Float](k *layerNormKernel[T], y, x, gamma, beta []T, mean, rstd []float64, d int) {
	*k = layerNormKernel[T]{y: y, x: x, gamma: gamma, beta: beta, mean: mean, rstd: rstd, d: d}
	parallel.For(len(mean), parallel.RowGrain(d), k)
	*k = layerNormKernel[T]{} // keep no tensor alive
}

type layerNormKernel[T graph.Float] struct {
	y, x, gamma, beta []T
	mean, rstd        []float64
	d                 int
}

func (k *layerNormKernel[T]) Run(lo, hi int) {
	d := k.d
	for r := lo; r < hi; r++ {
		layerNormApply(k.y[r*d:(r+1)*d], k.x[r*d:(r+1)*d], k.gamma, k.beta, k.mean[r], k.rstd[r])
	}
}

// layerNormApply writes y = (x − mean)·rstd (·γ (+ β)), rounded once.
func layerNormApply[T graph.Float](y, x, gamma, beta []T, mean, rstd float64) {
	for j, v := range x {
		xh := (float64(v) - mean) * rstd
		switch {
		case beta != nil:
			xh = xh*float64(gamma[j]) + float64(beta[j])
		case gamma != nil:
			xh = xh * float64(gamma[j])
		}
		y[j] = T(xh)
	}
}

// LayerNormRow normalizes one row x into y (which may be x) as LayerNorm
// does, statistics in float64 and one rounding per output, and returns the
// row's mean and reciprocal standard deviation. gamma and beta are nil or
// as long as x (beta nil: no bias).
func LayerNormRow[T graph.Float](y, x, gamma, beta []T, eps float64) (mean, rstd float64) {
	mu, rs := rowStats(x, eps)
	layerNormApply(y, x, gamma, beta, mu, rs)
	return mu, rs
}

// backward: dx from (x, stats, g[, γ]), dγ from (x, stats, g), dβ = Σ_rows g.
func (op *layerNormOp) backward(gs *opkit.Grads) {
	x, st, g := gs.Input(0), gs.Input(1), gs.Grad()
	if op.affine == 0 {
		gs.Set(0, gs.Apply(newLayerNormGrad(0, false), x, st, g))
		return
	}
	gs.Set(0, gs.Apply(newLayerNormGrad(op.affine, false), x, st, g, gs.Input(2)))
	gs.Set(2, gs.Apply(newLayerNormGrad(op.affine, true), x, st, g))
	if op.affine == 2 {
		gs.Set(3, gs.Apply(newSumRows(), g))
	}
}

// layerNormGradOp computes dx from (x, stats, g[, γ]), or dγ from
// (x, stats, g) when gamma is set.
type layerNormGradOp struct {
	opkit.Base
	gamma bool
	out   opkit.Buffer
	acc   []float64 // dγ accumulated in float64, reused across runs
	k32   layerNormGradKernel[float32]
	k64   layerNormGradKernel[float64]
	g32   layerNormGammaKernel[float32]
	g64   layerNormGammaKernel[float64]
}

// newLayerNormGrad: dx takes γ when the forward op has it (affine > 0).
func newLayerNormGrad(affine int, gamma bool) *layerNormGradOp {
	op := &layerNormGradOp{gamma: gamma}
	op.Base = opkit.Base{
		Name:     "layernorm.dx",
		Key:      fmt.Sprintf("ops.layernormgrad(%t,%t)", affine > 0, gamma),
		Dims:     []int{2, 2, 2},
		Backward: opkit.NotImplemented("double backward through LayerNorm"),
	}
	switch {
	case gamma:
		op.Name, op.Dims = "layernorm.dγ", []int{2, 2, 2, 1}
	case affine > 0:
		op.Dims = []int{2, 2, 2, 1, 2}
	default:
		op.Dims = []int{2, 2, 2, 2}
	}
	return op
}

// Type: x, the float64 statistics, g[, γ] → dx or dγ.
func (op *layerNormGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := []hm.Type{G.TensorType{Dims: 2, Of: a}, float64Matrix}
	for _, d := range op.Dims[2:] {
		ts = append(ts, G.TensorType{Dims: d, Of: a})
	}
	return hm.NewFnType(ts...)
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

func (op *layerNormGradOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *layerNormGradOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"input", "statistics", "gradient", "gamma"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	x, g, gamma := in[0], in[2], in[3]
	if err := opkit.SameLayout(op, x, "gradient", g); err != nil {
		return nil, err
	}
	rows, d := x.Shape()[0], x.Shape()[1]
	mean, rstd, err := statsOf(op, in[1], rows)
	if err != nil {
		return nil, err
	}
	if op.gamma {
		var shape [1]int
		shape[0] = d
		out, err := op.out.Use(op, prealloc, x.Dtype(), shape[:])
		if err != nil {
			return nil, err
		}
		if len(op.acc) != d {
			op.acc = make([]float64, d)
		}
		switch out.Dtype() {
		case tensor.Float32:
			o := out.Float32s()
			layerNormGradGamma(&op.g32, o, x.Float32s(), g.Float32s(), mean, rstd, op.acc)
		case tensor.Float64:
			o := out.Float64s()
			layerNormGradGamma(&op.g64, o, x.Float64s(), g.Float64s(), mean, rstd, op.acc)
		}
		return out, nil
	}
	if gamma != nil && (gamma.Shape().TotalSize() != d || gamma.Dtype() != x.Dtype()) {
		return nil, fmt.Errorf("%v: gamma is %v%v, want %v(%d)", op, gamma.Dtype(), gamma.Shape(), x.Dtype(), d)
	}
	out, err := op.out.Use(op, prealloc, x.Dtype(), x.Shape())
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		layerNormGradX(&op.k32, o, x.Float32s(), g.Float32s(), affineData[float32](gamma), mean, rstd)
	case tensor.Float64:
		o := out.Float64s()
		layerNormGradX(&op.k64, o, x.Float64s(), g.Float64s(), affineData[float64](gamma), mean, rstd)
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
