package optim

// Fused elementwise update kernels: one pass per tensor reads the
// parameter, its gradient and its state once and writes each once.
//
// Arithmetic is float64 for both dtypes; for float32 every stored value
// (parameter, buffer, moment) is rounded once and the rounded value is what
// the rest of the step reads, as PyTorch reads its state tensors back.
// Products are wrapped in float64(...) because the Go spec lets a compiler
// fuse x*y+z into one FMA unless an explicit conversion rounds x*y; without
// the wrapping, results could depend on the build target.

import (
	"math"
	"sync"
)

// sgdKernel is one SGD step over a tensor.
type sgdKernel[T float] struct {
	p, g, buf []T // buf is nil when momentum is 0
	first     bool

	lr, momentum, dampening, weightDecay float64
	nesterov, maximize                   bool

	bad firstBad
	wg  sync.WaitGroup
}

// step updates p (and buf) from g and returns the first index where the
// new parameter is not finite, or -1.
func (k *sgdKernel[T]) step(p, g, buf []T, first bool) int {
	k.p, k.g, k.buf, k.first = p, g, buf, first
	k.bad.reset()
	parallelFor(len(p), minChunk, k, &k.wg)
	k.p, k.g, k.buf = nil, nil, nil
	return k.bad.get()
}

func (k *sgdKernel[T]) run(lo, hi int) {
	p := k.p[lo:hi]
	g := k.g[lo:hi]
	g = g[:len(p)]
	var buf []T
	if k.buf != nil {
		buf = k.buf[lo:hi]
		buf = buf[:len(p)]
	}
	lr, mu, keep, wd := k.lr, k.momentum, 1-k.dampening, k.weightDecay
	first, nesterov, maximize := k.first, k.nesterov, k.maximize
	found := false
	for i := range p {
		w := float64(p[i])
		d := float64(g[i])
		if maximize {
			d = -d
		}
		if wd != 0 {
			d += float64(wd * w)
		}
		if buf != nil {
			b := d // PyTorch's first buffer is the gradient itself, undamped
			if !first {
				b = float64(mu*float64(buf[i])) + float64(keep*d)
			}
			buf[i] = T(b)
			b = float64(buf[i])
			if nesterov {
				d += float64(mu * b)
			} else {
				d = b
			}
		}
		v := T(w - float64(lr*d))
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
	wg  sync.WaitGroup
}

func (k *adamKernel[T]) step(p, g, m, v, vmax []T) int {
	k.p, k.g, k.m, k.v, k.vmax = p, g, m, v, vmax
	k.bad.reset()
	parallelFor(len(p), minChunk, k, &k.wg)
	k.p, k.g, k.m, k.v, k.vmax = nil, nil, nil, nil, nil
	return k.bad.get()
}

func (k *adamKernel[T]) run(lo, hi int) {
	p := k.p[lo:hi]
	n := len(p)
	g, m, v := k.g[lo:hi][:n], k.m[lo:hi][:n], k.v[lo:hi][:n]
	var vmax []T
	if k.vmax != nil {
		vmax = k.vmax[lo:hi][:n]
	}
	b1, b2, c1, c2 := k.beta1, k.beta2, 1-k.beta1, 1-k.beta2
	eps, wd, decay, stepSize, bc2sqrt := k.eps, k.weightDecay, k.decay, k.stepSize, k.bc2sqrt
	decoupled, maximize := k.decoupled, k.maximize
	found := false
	for i := range p {
		w := float64(p[i])
		gr := float64(g[i])
		if maximize {
			gr = -gr
		}
		if decoupled {
			if decay != 1 {
				w = float64(w * decay)
			}
		} else if wd != 0 {
			gr += float64(wd * w)
		}
		m[i] = T(float64(b1*float64(m[i])) + float64(c1*gr))
		v[i] = T(float64(b2*float64(v[i])) + float64(float64(c2*gr)*gr))
		mi, vi := float64(m[i]), float64(v[i])
		if vmax != nil {
			if old := float64(vmax[i]); old > vi {
				vi = old
			} else {
				vmax[i] = T(vi)
			}
		}
		denom := float64(math.Sqrt(vi)/bc2sqrt) + eps
		nw := T(w - float64(stepSize*mi)/denom)
		p[i] = nw
		if nw-nw != 0 && !found {
			found = true
			k.bad.record(lo + i)
		}
	}
}
