package fused

// The logistic sigmoid σ(x) = 1/(1 + e^−x), the gate of Dauphin et al.'s GLU:
//
//	forward   y = σ(x)   (as e^x/(1+e^x) for x < 0, so nothing overflows)
//	backward  dx = g ⊙ y ⊙ (1 − y)   (from the saved output)
//
// Double backward is not implemented (the backward op reports an error).

import (
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
)

// Sigmoid returns σ(x) elementwise (torch.sigmoid).
func Sigmoid(x *G.Node) (*G.Node, error) { return applySavedOutput(sigmoidKind, x) }

// sigmoidInto writes σ(x), or with g given (x then being σ's output)
// g·x·(1−x). It is elementwise: n is not used.
func sigmoidInto[T graph.Float](out, x, g []T, n int) {
	parallel.Elements(len(out), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := float64(x[i])
			if g != nil {
				out[i] = T(float64(g[i]) * v * (1 - v))
				continue
			}
			out[i] = T(SigmoidOf(v))
		}
	})
}
