package activation_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
)

// mish is f^(k)(x), k = 0, 1, 2, of Mish, x·tanh(softplus(x)) (Misra
// 2019), to a few ulp everywhere (see the test against mpmath). With
// e = eˣ, tanh(log(1+e)) = n/(n+2) where n = e(e+2), so neither tanh nor
// log is needed, and with t = tanh(softplus(x)):
//
//	f   = x·t
//	f'  = t + x·g,     g  = t' = 4e(1+e)/(n+2)²
//	f'' = 2g + x·g',   g' = 4e(2 + 2e − 3e² − 2e³)/(n+2)³
//
// For x > 0 the same forms in u = e⁻ˣ cannot overflow. Below x = −700,
// where eˣ nears the subnormal range, t = eˣ(1 − eˣ/2 + …) and
// f^(k) = (x+k)·eˣ to float64 precision.
func mish(k int, x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 0:
		u := math.Exp(-x)
		if u == 0 { // x > 745: f = x, f' = 1 exactly, f'' underflows
			return [3]float64{x, 1, 0}[k]
		}
		w := 1 + 2*u*(1+u)
		t := (1 + 2*u) / w
		switch k {
		case 0:
			return x * t
		case 1:
			return t + x*(u*(u*4*(1+u)/(w*w)))
		}
		// The factors u come last, so only the last product can round
		// into the subnormal range.
		p := ((2*u+2)*u-3)*u - 2
		return u * (u * 4 * (2*(1+u)*w + x*p) / (w * w * w))
	case x < -1490: // e^(x/2) underflows: every f^(k) is −0
		return math.Copysign(0, -1)
	case x < -700:
		a := math.Exp(x / 2)
		return (x + float64(k)) * a * a
	}
	e := math.Exp(x)
	n := e * (e + 2)
	w := n + 2
	switch k {
	case 0:
		return x * n / w
	case 1:
		return n/w + x*(4*e*(1+e)/(w*w))
	}
	q := 2 + e*(2-e*(3+2*e))
	return 4 * e * (2*(1+e)*w + x*q) / (w * w * w)
}

// newMish defines Mish for the graph, the kernels, package analysis and
// ParseActivation. New checks D1 and D2 against finite differences of F
// and D1 before it returns.
func newMish(name string) (activation.Activation, error) {
	return activation.New(activation.Def{
		Name:  name,
		Title: "Mish",
		F:     func(x float64) float64 { return mish(0, x) },
		D1:    func(x float64) float64 { return mish(1, x) },
		D2:    func(x float64) float64 { return mish(2, x) },
	})
}

// Mish is defined once, when the program starts.
var mishAct, errMish = newMish("mish")

// Define Mish from its float64 references, register it so that
// ParseActivation (and the examples' -acts flags) know it, and use it like
// a built-in activation: Apply, the slice kernels, package analysis.
func ExampleNew() {
	m, err := mishAct, errMish
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := activation.Register(m); err != nil {
		fmt.Println(err)
		return
	}
	a, err := activation.ParseActivation("mish")
	fmt.Println(a.Title(), a == m, err)

	fmt.Printf("f(1) = %.6f, f'(0) = %.6f, f''(0) = %.6f\n", m.F(1), m.Deriv(0), m.Deriv2(0))
	p, err := analysis.ProfileOf(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("minimum %.6f at x = %.6f; E[f(X)] = %.6f for X ~ N(0, 1)\n", p.MinF, p.MinX, p.Mean.Value)

	// A second derivative 0.1% off is refused.
	_, err = activation.New(activation.Def{Name: "mish_wrong",
		F:  func(x float64) float64 { return mish(0, x) },
		D1: func(x float64) float64 { return mish(1, x) },
		D2: func(x float64) float64 { return 1.001 * mish(2, x) },
	})
	msg, _, _ := strings.Cut(fmt.Sprint(err), " at ")
	fmt.Println(msg)
	// Output:
	// Mish true <nil>
	// f(1) = 0.865098, f'(0) = 0.600000, f''(0) = 0.640000
	// minimum -0.308843 at x = -1.192431; E[f(X)] = 0.240404 for X ~ N(0, 1)
	// activation.New "mish_wrong": f'' disagrees with finite differences of f'
}
