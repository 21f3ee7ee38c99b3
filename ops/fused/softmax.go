package fused

// Softmax over the last axis, numerically stable (the row maximum is
// subtracted before exponentiating, in float64 for both dtypes):
//
//	forward   y = exp(x − max x) / Σ exp(x − max x)     (per row)
//	backward  dx = y ⊙ (g − Σ_row g ⊙ y)
//
// The backward op reads the forward output y; double backward through it
// is not implemented (the backward op reports an error if differentiated).

import (
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
)

// Softmax returns softmax(x) over the last axis of x (any number of
// dimensions ≥ 1), like torch.softmax(x, dim=-1).
func Softmax(x *G.Node) (*G.Node, error) { return applySavedOutput(softmaxKind, x) }

// softmaxRows writes softmax(x) per row of n, or with g given (x then
// being softmax's output) the backward y ⊙ (g − Σ g ⊙ y).
func softmaxRows[T graph.Float](y, x, g []T, n int) {
	if n == 0 {
		return
	}
	parallel.Rows(len(x)/n, n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			if g != nil {
				softmaxGradRow(y[r*n:(r+1)*n], x[r*n:(r+1)*n], g[r*n:(r+1)*n])
			} else {
				SoftmaxRow(y[r*n:(r+1)*n], x[r*n:(r+1)*n])
			}
		}
	})
}

// SoftmaxRow writes softmax(x) into y (which may be x), as Softmax and
// ScaledDotProductAttention compute each row: in float64, each
// probability rounded, then scaled by the rounded reciprocal sum. Entries of x that are −Inf get
// probability 0, and a row that is all −Inf gets all zeros (PyTorch gives
// NaN there; zeros keep a fully masked row from poisoning the gradients).
func SoftmaxRow[T graph.Float](y, x []T) {
	// A NaN never becomes the maximum here, but still reaches the sum and
	// makes the row NaN, as math.Max would (which is several times slower).
	m := math.Inf(-1)
	for _, v := range x {
		if f := float64(v); f > m {
			m = f
		}
	}
	if math.IsInf(m, -1) {
		clear(y)
		return
	}
	var s float64
	for j, v := range x {
		e := math.Exp(float64(v) - m)
		y[j] = T(e)
		s += e
	}
	inv := 1 / s
	for j := range y {
		y[j] = T(float64(y[j]) * inv)
	}
}

// softmaxGradRow writes dx = y ⊙ (g − Σ g ⊙ y) for one row.
func softmaxGradRow[T graph.Float](dx, y, g []T) {
	var s float64
	for j, v := range y {
		s += float64(v) * float64(g[j])
	}
	for j, v := range y {
		dx[j] = T(float64(v) * (float64(g[j]) - s))
	}
}
