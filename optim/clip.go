package optim

// Gradient clipping by global L2 norm, as torch.nn.utils.clip_grad_norm_.

import (
	"fmt"
	"math"
	"sync"

	"github.com/geluproject/gelu/ops/parallel"
	"gorgonia.org/tensor"
)

// normBlock is the number of elements summed sequentially into one partial
// sum. Blocks, not CPUs, fix the summation order, so the norm is the same
// bit for bit on any number of cores.
const normBlock = 1 << 16

// ClipGradNorm scales the gradients in place so that their global L2 norm
// (over all elements of all tensors, as if concatenated) is at most
// maxNorm, and returns the norm before scaling. As in PyTorch, the
// coefficient is maxNorm/(norm + 1e-6) and is applied only when it is
// below 1. nil entries are skipped.
//
// The sum of squares is accumulated in float64 for both dtypes, with a
// rescaled second pass if it overflows, so it is finite whenever every
// element is. maxNorm must be > 0; +Inf measures the norm without clipping.
// A NaN or ±Inf element is an error naming it, and then nothing is scaled
// (PyTorch 1.13's default would multiply every gradient by NaN).
func ClipGradNorm(grads []*tensor.Dense, maxNorm float64) (totalNorm float64, err error) {
	if math.IsNaN(maxNorm) || maxNorm <= 0 {
		return 0, fmt.Errorf("optim.ClipGradNorm: max norm %v, want > 0 (+Inf to only measure)", maxNorm)
	}
	for i, g := range grads {
		if g == nil {
			continue
		}
		if dt := g.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
			return 0, fmt.Errorf("optim.ClipGradNorm: grads[%d] is %v, want float32 or float64", i, dt)
		}
		if err := checkContiguous(g); err != nil {
			return 0, fmt.Errorf("optim.ClipGradNorm: grads[%d]: %w", i, err)
		}
	}
	k := clipPool.Get().(*clipKernels)
	defer clipPool.Put(k)

	sum := 0.0
	for _, g := range grads {
		sum += k.sumSquares(g, 1)
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		for i, g := range grads {
			if g == nil {
				continue
			}
			if j := k.check.firstNonFinite(g); j >= 0 {
				return math.NaN(), fmt.Errorf("optim.ClipGradNorm: grads[%d] %v has %v at element %d (index %v); nothing was scaled",
					i, g.Shape(), at(g, j), j, unravel(g.Shape(), j))
			}
		}
		// Every element is finite, so the squares overflowed: sum (g/s)²
		// with s the largest magnitude.
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
		totalNorm = scale * math.Sqrt(sum)
	} else {
		totalNorm = math.Sqrt(sum)
	}
	coef := maxNorm / (totalNorm + 1e-6)
	if coef < 1 {
		for _, g := range grads {
			k.scale(g, coef)
		}
	}
	return totalNorm, nil
}

var clipPool = sync.Pool{New: func() any { return new(clipKernels) }}

// clipKernels holds reusable kernels so that clipping allocates nothing in
// steady state.
type clipKernels struct {
	n32   normKernel[float32]
	n64   normKernel[float64]
	s32   scaleKernel[float32]
	s64   scaleKernel[float64]
	check checker
}

// sumSquares returns Σ (s·g)² over g (0 for nil), block by block.
func (k *clipKernels) sumSquares(g *tensor.Dense, s float64) float64 {
	switch {
	case g == nil:
		return 0
	case g.Dtype() == tensor.Float32:
		return k.n32.sum(g.Float32s(), s)
	default:
		return k.n64.sum(g.Float64s(), s)
	}
}

func (k *clipKernels) scale(g *tensor.Dense, c float64) {
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
