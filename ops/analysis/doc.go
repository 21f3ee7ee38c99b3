// Package analysis computes, from an activation's float64 references, the
// numbers that papers and posts quote about it: expectations and variances
// under a unit Gaussian input (adaptive Gauss–Kronrod quadrature with an
// error estimate, and Monte Carlo with a standard error), the minimum, the
// zeros of f, f', f” (inflection points), where f is convex, the largest
// difference between two activations, and all of it at once in a Profile.
//
// Minimal use:
//
//	p, err := analysis.ProfileOf(activation.GELU)
//	fmt.Println(p.MinX, p.MinF)                 // −0.7518, −0.1700
//	e, err := analysis.NormalExpectation(activation.GELU.F) // E[GELU(X)] ± error
//
// It works on any activation.Activation, user-defined ones (activation.New)
// included: everything here reads only F, Deriv, Deriv2 and Breakpoints.
// It is used by the examples and the property tests, never by a training
// step.
package analysis
