package optim

// The global gradient norm and clipping by it, as
// torch.nn.utils.clip_grad_norm_: one implementation for both, so a logged
// norm has the same bits whether or not the run clips.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/parallel"
	"gorgonia.org/tensor"
)

// normBlock is the number of elements summed sequentially into one partial
// sum. Blocks, not CPUs, fix the summation order, so the norm is the same
// bit for bit on any number of cores.
const normBlock = 1 << 16

// GradNorm returns the global L2 norm of the gradients (over all elements
// of all tensors, as if concatenated), without changing them; nil entries
// are skipped, as PyTorch skips a parameter whose .grad is None. It is
// ClipGradNorm's norm, bit for bit: a training loop logs GradNorm(grads)
// when it does not clip and ClipGradNorm's result when it does.
//
// The sum of squares is accumulated in float64 for both dtypes, in
// fixed-size blocks (the same bits on any number of cores), with a rescaled
// second pass if it overflows, so it is finite whenever every element is.
// A NaN or ±Inf element is an error naming it and wrapping
// graph.ErrNonFinite.
func GradNorm(grads []*tensor.Dense) (float64, error) {
	k := clipKernels.Get()
	defer clipKernels.Put(k)
	return k.norm("optim.GradNorm", grads)
}

// ClipGradNorm scales the gradients in place so that their global L2 norm
// is at most maxNorm, and returns the norm before scaling (GradNorm's). As
// in PyTorch, the coefficient is maxNorm/(norm + 1e-6) and is applied only
// when it is below 1. nil entries are skipped.
//
// maxNorm must be > 0; +Inf only measures, as GradNorm. A NaN or ±Inf
// element is an error naming it, and then nothing is scaled (PyTorch
// 1.13's default would multiply every gradient by NaN).
func ClipGradNorm(grads []*tensor.Dense, maxNorm float64) (totalNorm float64, err error) {
	if math.IsNaN(maxNorm) || maxNorm <= 0 {
		return 0, fmt.Errorf("optim.ClipGradNorm: max norm %v, want > 0 (+Inf to only measure)", maxNorm)
	}
	k := clipKernels.Get()
	defer clipKernels.Put(k)
	totalNorm, err = k.norm("optim.ClipGradNorm", grads)
	if err != nil {
		return totalNorm, err
	}
	coef := maxNorm / (totalNorm + 1e-6)
	if coef < 1 {
		for _, g := range grads {
			k.scale(g, coef)
		}
	}
	return totalNorm, nil
}

// clipKernels are reused across calls; a FreeList, unlike a sync.Pool,
// keeps them through garbage collections, so a training step's norm
// allocates nothing.
var clipKernels parallel.FreeList[normKernels]

// norm validates grads and returns their global L2 norm.
func (k *normKernels) norm(who string, grads []*tensor.Dense) (float64, error) {
	for i, g := range grads {
		if g == nil {
			continue
		}
		if dt := g.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
			return 0, fmt.Errorf("%s: grads[%d] is %v, want float32 or float64", who, i, dt)
		}
		if err := checkContiguous(g); err != nil {
			return 0, fmt.Errorf("%s: grads[%d]: %w", who, i, err)
		}
	}
	sum := 0.0
	for _, g := range grads {
		sum += k.sumSquares(g, 1)
	}
	if !math.IsNaN(sum) && !math.IsInf(sum, 0) {
		return math.Sqrt(sum), nil
	}
	for i, g := range grads {
		if g == nil {
			continue
		}
		if j := k.check.firstNonFinite(g); j >= 0 {
			return math.NaN(), fmt.Errorf("%s: grads[%d] %v has %v at element %d (index %v); nothing was scaled: %w",
				who, i, g.Shape(), at(g, j), j, unravel(g.Shape(), j), graph.ErrNonFinite)
		}
	}
	// Every element is finite, so the squares overflowed: sum (g/s)² with s
	// the largest magnitude.
	scale := 0.0
	for _, g := range grads {
		for j := 0; g != nil && j < g.DataSize(); j++ {
			scale = max(scale, math.Abs(at(g, j)))
		}
	}
	sum = 0
	for _, g := range grads {
		sum += k.sumSquares(g, 1/scale)
	}
	return scale * math.Sqrt(sum), nil
}

// normKernels holds the kernels of a norm and a clipping.
type normKernels struct {
	n32   normKernel[float32]
	n64   normKernel[float64]
	s32   scaleKernel[float32]
	s64   scaleKernel[float64]
	check checker
}

// sumSquares returns Σ (s·g)² over g (0 for nil), block by block.
func (k *normKernels) sumSquares(g *tensor.Dense, s float64) float64 {
	switch {
	case g == nil:
		return 0
	case g.Dtype() == tensor.Float32:
		return k.n32.sum(g.Float32s(), s)
	default:
		return k.n64.sum(g.Float64s(), s)
	}
}

func (k *normKernels) scale(g *tensor.Dense, c float64) {
	switch {
	case g == nil:
	case g.Dtype() == tensor.Float32:
		k.s32.apply(g.Float32s(), c)
	default:
		k.s64.apply(g.Float64s(), c)
	}
}

type normKernel[T float] struct {
	x        []T
	s        float64
	partials []float64
}

func (k *normKernel[T]) sum(x []T, s float64) float64 {
	blocks := (len(x) + normBlock - 1) / normBlock
	if cap(k.partials) < blocks {
		k.partials = make([]float64, blocks)
	}
	k.x, k.s, k.partials = x, s, k.partials[:blocks]
	parallel.For(blocks, 1, k)
	k.x = nil
	total := 0.0
	for _, p := range k.partials {
		total += p
	}
	return total
}

// Run sums blocks lo..hi-1.
func (k *normKernel[T]) Run(lo, hi int) {
	x, s := k.x, k.s
	for b := lo; b < hi; b++ {
		acc := 0.0
		for _, v := range x[b*normBlock : min((b+1)*normBlock, len(x))] {
			x := float64(v) * s
			acc += float64(x * x)
		}
		k.partials[b] = acc
	}
}

type scaleKernel[T float] struct {
	x []T
	c float64
}

func (k *scaleKernel[T]) apply(x []T, c float64) {
	k.x, k.c = x, c
	parallel.For(len(x), parallel.MinGrain, k)
	k.x = nil
}

func (k *scaleKernel[T]) Run(lo, hi int) {
	x, c := k.x[lo:hi], k.c
	for i, v := range x {
		x[i] = T(float64(v) * c)
	}
}
