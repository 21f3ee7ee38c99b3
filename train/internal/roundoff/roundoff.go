// Package roundoff bounds, for the data-parallel tests, how far two
// floating-point trainings of one linear model may drift apart when they
// compute the same steps with their sums in different orders: one process
// on a whole batch against ranks that each take a share of it and sum the
// shares.
//
// The model is p = x·w + b with the mean squared error and plain SGD, so
// that every rounding has a closed-form bound; the bounds are worked out
// on float64 copies of the values and hold for float32 or float64
// arithmetic with the unit roundoff Unit.
package roundoff

import "math"

// Linear is one step's data and arithmetic: the rows of the step (a
// global batch, or all the micro-batches of an accumulated step).
type Linear struct {
	Unit float64 // unit roundoff of the dtype: 2⁻²⁴ or 2⁻⁵³
	N, D int     // rows of the step, features
	// Terms counts the roundings one training has and the other has not
	// besides the sums over rows: one per rank (the shares scaled and
	// summed) and one per micro-batch of an accumulated step.
	Terms int
	LR    float64
	Xs    [][]float64 // the step's rows
	Ys    []float64   // their targets
}

// GradError bounds |ĝ − g(w, b)| componentwise (w's then b's) for the
// gradient ĝ computed in floating point over the step's rows, or over
// shares of them, scaled and summed, whatever the order of the sums
// (blocked, pairwise, fused multiply-adds). With r_i = x_i·w + b − y_i and
// A_i = Σ_k |w_k x_ik| + |b| + |y_i|, computing r_i costs at most D + 2
// roundings relative to A_i, scaling it by 2/N (or 2/N_rank) a few more,
// the N products and sums over rows γ_N relative to Σ_i |x_ik|·|r_i|, and
// the Terms more; so
//
//	|ĝ_k − g_k| ≤ (2/N)·γ_m·Σ_i |x_ik|·(|r_i| + A_i),  m = N + D + Terms + 16,
//
// with x_ik = 1 for b, γ_m = m·u/(1 − m·u), and 16 a generous allowance
// for the roundings of the loss's own constant factors.
func (l *Linear) GradError(w []float64, b float64) []float64 {
	m := float64(l.N + l.D + l.Terms + 16)
	gamma := m * l.Unit / (1 - m*l.Unit)
	out := make([]float64, l.D+1)
	for i, x := range l.Xs {
		r, a := b-l.Ys[i], math.Abs(b)+math.Abs(l.Ys[i])
		for k := range x {
			r += w[k] * x[k]
			a += math.Abs(w[k] * x[k])
		}
		for k := range x {
			out[k] += math.Abs(x[k]) * (math.Abs(r) + a)
		}
		out[l.D] += math.Abs(r) + a
	}
	for k := range out {
		out[k] *= 2 / float64(l.N) * gamma
	}
	return out
}

// Lipschitz bounds |g(w, b) − g(w', b')| componentwise for parameters at
// most e apart (exact arithmetic): (2/N)·Σ_i |x_ik|·(Σ_j |x_ij|·e_j + e_b).
func (l *Linear) Lipschitz(e []float64) []float64 {
	out := make([]float64, l.D+1)
	for _, x := range l.Xs {
		s := e[l.D]
		for j := range x {
			s += math.Abs(x[j]) * e[j]
		}
		for k := range x {
			out[k] += math.Abs(x[k]) * s
		}
		out[l.D] += s
	}
	for k := range out {
		out[k] *= 2 / float64(l.N)
	}
	return out
}

// GradBound is the most the two trainings' gradients may differ by,
// componentwise, when their parameters p1 and p2 (w's then b) are at most
// e apart: GradError at both plus Lipschitz for e, with a relative margin
// of 10⁻⁹ for the bound's own rounding.
func (l *Linear) GradBound(p1, p2, e []float64) []float64 {
	e1, e2, el := l.GradError(p1[:l.D], p1[l.D]), l.GradError(p2[:l.D], p2[l.D]), l.Lipschitz(e)
	out := make([]float64, l.D+1)
	for k := range out {
		out[k] = (e1[k] + e2[k] + el[k]) * (1 + 1e-9)
	}
	return out
}

// ParamBound is the most the parameters may differ by after the SGD
// update p' = p − lr·ĝ on both sides: the old distance e, LR times the
// gradients' distance dg, and one rounding of each update's product and
// difference, 2u·(|p'| + lr·|ĝ|) on either side (p1, p2 the updated
// parameters, g1, g2 the gradients used).
func (l *Linear) ParamBound(e, dg, p1, p2, g1, g2 []float64) []float64 {
	out := make([]float64, len(e))
	for k := range e {
		out[k] = (e[k] + l.LR*dg[k] + 2*l.Unit*(math.Abs(p1[k])+math.Abs(p2[k])+l.LR*(math.Abs(g1[k])+math.Abs(g2[k])))) * (1 + 1e-9)
	}
	return out
}
