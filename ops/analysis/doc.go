// Package analysis computes, from an activation's float64 references, the
// numbers that papers and posts quote about it: expectations and variances
// under a unit Gaussian input (adaptive Gauss–Kronrod quadrature with an
// error estimate, and Monte Carlo with a standard error), the minimum, the
// zeros of f, f', f” (inflection points), where f is convex, the largest
// difference between two activations, and all of it at once in a Profile.
//
// Minimal use: GELU's minimum, and its mean under a unit Gaussian input
// against the closed form 1/(2√π) (Example):
//
//	p, err := analysis.ProfileOf(activation.GELU)
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	fmt.Printf("minimum %.4f at x = %.4f\n", p.MinF, p.MinX)
//	e, err := analysis.NormalExpectation(activation.GELU.F) // E[GELU(X)], X ~ N(0, 1), with an error bound
//	fmt.Printf("E[GELU(X)] = %.10f, 1/(2√π) = %.10f, %v\n", e.Value, 1/(2*math.Sqrt(math.Pi)), err)
//
// It works on any activation.Activation, user-defined ones (activation.New)
// included: everything here reads only F, Deriv, Deriv2 and Breakpoints.
// It is used by the examples and the property tests, never by a training
// step.
package analysis
