package optim

// Fused elementwise update kernels: one pass per tensor reads the
// parameter, its gradient and its state once and writes each once.
//
// Arithmetic is in the parameter's dtype, as in PyTorch's CPU kernels:
// float32 parameters get float32 arithmetic, with hyperparameters and bias
// corrections computed in float64 and rounded once per step (PyTorch casts
// its Python-float scalars the same way). Products are wrapped in T(...)
// because the Go spec lets a compiler fuse x*y+z into one FMA unless an
// explicit conversion rounds x*y; without the wrapping, results could
// depend on the build target.
//
// Where package simd has assembly for the CPU (AVX-512 or AVX2), each chunk
// runs its kernel instead of the loop here: the same operations in the same
// order, so the results are these loops' bit for bit (tests check every
// option on every path). The loops stay the portable path and the reference.

import (
	"math"
	"sync/atomic"

	"github.com/geluproject/gelu/ops/parallel"
	"github.com/geluproject/gelu/ops/simd"
)

// sgdKernel is one SGD step over a tensor.
type sgdKernel[T float] struct {
	p, g, buf []T // buf is nil when momentum is 0
	first     bool

	lr, momentum, dampening, weightDecay float64
	nesterov, maximize                   bool

	// The hyperparameters in T and the options, as the loop uses them.
	h     [simd.SGDParams]T
	flags simd.UpdateFlags

	bad firstBad
}

// step updates p (and buf) from g and returns the first index where the
// new parameter is not finite, or -1.
func (k *sgdKernel[T]) step(p, g, buf []T, first bool) int {
	k.p, k.g, k.buf, k.first = p, g, buf, first
	k.h = [...]T{simd.SGDLR: T(k.lr), simd.SGDMomentum: T(k.momentum), simd.SGDKeep: T(1 - k.dampening), simd.SGDWeightDecay: T(k.weightDecay)}
	k.flags = flagIf(k.maximize, simd.Maximize) | flagIf(k.h[simd.SGDWeightDecay] != 0, simd.WeightDecay) |
		flagIf(buf != nil, simd.Momentum) | flagIf(first, simd.FirstStep) | flagIf(k.nesterov, simd.Nesterov)
	k.bad.reset()
	parallel.For(len(p), parallel.MinGrain, k)
	k.p, k.g, k.buf = nil, nil, nil
	return k.bad.get()
}

func (k *sgdKernel[T]) Run(lo, hi int) {
	p := k.p[lo:hi]
	g := k.g[lo:hi]
	g = g[:len(p)]
	var buf []T
	if k.buf != nil {
		buf = k.buf[lo:hi]
		buf = buf[:len(p)]
	}
	if j, ok := simdSGD(p, g, buf, &k.h, k.flags); ok {
		if j >= 0 {
			k.bad.record(lo + j)
		}
		return
	}
	lr, mu, keep, wd := k.h[simd.SGDLR], k.h[simd.SGDMomentum], k.h[simd.SGDKeep], k.h[simd.SGDWeightDecay]
	first, nesterov, maximize := k.first, k.nesterov, k.maximize
	found := false
	for i := range p {
		w, d := p[i], g[i]
		if maximize {
			d = -d
		}
		if wd != 0 {
			d += T(wd * w)
		}
		if buf != nil {
			b := d // PyTorch's first buffer is the gradient itself, undamped
			if !first {
				b = T(mu*buf[i]) + T(keep*d)
			}
			buf[i] = b
			if nesterov {
				d += T(mu * b)
			} else {
				d = b
			}
		}
		v := w - T(lr*d)
		p[i] = v
		if v-v != 0 && !found {
			found = true
			k.bad.record(lo + i)
		}
	}
}

// adamKernel is one Adam or AdamW step over a tensor.
type adamKernel[T float] struct {
	p, g, m, v, vmax []T // vmax is nil unless AMSGrad

	beta1, beta2, eps, weightDecay float64
	decay                          float64 // AdamW's factor 1 − lr·λ (1: none)
	stepSize, bc2sqrt              float64 // lr/(1−β1^t), √(1−β2^t)
	decoupled, maximize            bool

	// The hyperparameters in T and the options, as the loop uses them.
	h     [simd.AdamParams]T
	flags simd.UpdateFlags

	bad firstBad
}

func (k *adamKernel[T]) step(p, g, m, v, vmax []T) int {
	k.p, k.g, k.m, k.v, k.vmax = p, g, m, v, vmax
	k.h = [...]T{
		simd.AdamBeta1: T(k.beta1), simd.AdamBeta2: T(k.beta2), simd.AdamOneMinusBeta1: T(1 - k.beta1), simd.AdamOneMinusBeta2: T(1 - k.beta2),
		simd.AdamEps: T(k.eps), simd.AdamWeightDecay: T(k.weightDecay), simd.AdamDecay: T(k.decay),
		simd.AdamStepSize: T(k.stepSize), simd.AdamBC2Sqrt: T(k.bc2sqrt),
	}
	k.flags = flagIf(k.maximize, simd.Maximize) | flagIf(k.decoupled && k.h[simd.AdamDecay] != 1, simd.Decay) |
		flagIf(!k.decoupled && k.h[simd.AdamWeightDecay] != 0, simd.WeightDecay) | flagIf(vmax != nil, simd.AMSGrad)
	k.bad.reset()
	parallel.For(len(p), parallel.MinGrain, k)
	k.p, k.g, k.m, k.v, k.vmax = nil, nil, nil, nil, nil
	return k.bad.get()
}

func (k *adamKernel[T]) Run(lo, hi int) {
	p := k.p[lo:hi]
	n := len(p)
	g, m, v := k.g[lo:hi][:n], k.m[lo:hi][:n], k.v[lo:hi][:n]
	var vmax []T
	if k.vmax != nil {
		vmax = k.vmax[lo:hi][:n]
	}
	if j, ok := simdAdam(p, g, m, v, vmax, &k.h, k.flags); ok {
		if j >= 0 {
			k.bad.record(lo + j)
		}
		return
	}
	h := &k.h
	b1, b2, c1, c2 := h[simd.AdamBeta1], h[simd.AdamBeta2], h[simd.AdamOneMinusBeta1], h[simd.AdamOneMinusBeta2]
	eps, wd, decay, stepSize, bc2sqrt := h[simd.AdamEps], h[simd.AdamWeightDecay], h[simd.AdamDecay], h[simd.AdamStepSize], h[simd.AdamBC2Sqrt]
	decoupled, maximize := k.decoupled, k.maximize
	found := false
	for i := range p {
		w, gr := p[i], g[i]
		if maximize {
			gr = -gr
		}
		if decoupled {
			if decay != 1 {
				w = T(w * decay)
			}
		} else if wd != 0 {
			gr += T(wd * w)
		}
		mi := T(b1*m[i]) + T(c1*gr)
		vi := T(b2*v[i]) + T(T(c2*gr)*gr)
		m[i], v[i] = mi, vi
		if vmax != nil {
			if old := vmax[i]; old > vi {
				vi = old
			} else {
				vmax[i] = vi
			}
		}
		denom := T(T(math.Sqrt(float64(vi)))/bc2sqrt) + eps
		nw := w - T(stepSize*mi)/denom
		p[i] = nw
		if nw-nw != 0 && !found {
			found = true
			k.bad.record(lo + i)
		}
	}
}

// flagIf is f if on, else no flag: the options of the loops below, for
// package simd's kernels.
func flagIf(on bool, f simd.UpdateFlags) simd.UpdateFlags {
	if on {
		return f
	}
	return 0
}

// simdSGD runs package simd's SGD kernel on one chunk and reports whether
// there was one for this CPU and dtype.
func simdSGD[T float](p, g, buf []T, h *[simd.SGDParams]T, flags simd.UpdateFlags) (int, bool) {
	switch p := any(p).(type) {
	case []float32:
		return simd.SGD32(p, any(g).([]float32), any(buf).([]float32), any(h).(*[simd.SGDParams]float32), flags)
	case []float64:
		return simd.SGD64(p, any(g).([]float64), any(buf).([]float64), any(h).(*[simd.SGDParams]float64), flags)
	}
	return -1, false
}

// simdAdam is simdSGD for Adam.
func simdAdam[T float](p, g, m, v, vmax []T, h *[simd.AdamParams]T, flags simd.UpdateFlags) (int, bool) {
	switch p := any(p).(type) {
	case []float32:
		return simd.Adam32(p, any(g).([]float32), any(m).([]float32), any(v).([]float32), any(vmax).([]float32), any(h).(*[simd.AdamParams]float32), flags)
	case []float64:
		return simd.Adam64(p, any(g).([]float64), any(m).([]float64), any(v).([]float64), any(vmax).([]float64), any(h).(*[simd.AdamParams]float64), flags)
	}
	return -1, false
}

// simdFirstNonFinite is simdSGD for finiteKernel.
func simdFirstNonFinite[T float](x []T) (int, bool) {
	switch x := any(x).(type) {
	case []float32:
		return simd.FirstNonFinite32(x)
	case []float64:
		return simd.FirstNonFinite64(x)
	}
	return -1, false
}

// firstBad records the lowest index at which a kernel found a non-finite
// value, across chunks running concurrently.
type firstBad struct{ v atomic.Int64 }

const noBad = int64(^uint64(0) >> 1)

func (f *firstBad) reset() { f.v.Store(noBad) }

func (f *firstBad) record(i int) {
	for {
		old := f.v.Load()
		if int64(i) >= old || f.v.CompareAndSwap(old, int64(i)) {
			return
		}
	}
}

// get returns the recorded index, or -1.
func (f *firstBad) get() int {
	if v := f.v.Load(); v != noBad {
		return int(v)
	}
	return -1
}
