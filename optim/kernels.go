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

import (
	"math"
	"sync/atomic"

	"github.com/geluproject/gelu/ops/parallel"
)

// sgdKernel is one SGD step over a tensor.
type sgdKernel[T float] struct {
	p, g, buf []T // buf is nil when momentum is 0
	first     bool

	lr, momentum, dampening, weightDecay float64
	nesterov, maximize                   bool

	bad firstBad
}

// step updates p (and buf) from g and returns the first index where the
// new parameter is not finite, or -1.
func (k *sgdKernel[T]) step(p, g, buf []T, first bool) int {
	k.p, k.g, k.buf, k.first = p, g, buf, first
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
	lr, mu, keep, wd := T(k.lr), T(k.momentum), T(1-k.dampening), T(k.weightDecay)
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

	bad firstBad
}

func (k *adamKernel[T]) step(p, g, m, v, vmax []T) int {
	k.p, k.g, k.m, k.v, k.vmax = p, g, m, v, vmax
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
	b1, b2, c1, c2 := T(k.beta1), T(k.beta2), T(1-k.beta1), T(1-k.beta2)
	eps, wd, decay, stepSize, bc2sqrt := T(k.eps), T(k.weightDecay), T(k.decay), T(k.stepSize), T(k.bc2sqrt)
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
