package activation

// The activation table: every activation is one row (row.go says what a
// row holds), declared in its own file beside its math (gelu.go, relu.go,
// ...). Everything below reads the row; nothing switches over activations.
// Adding an activation is one file with its functions and its row, plus
// its entry in table.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// table lists the activations in the order All returns them and
// ParseActivation's message names them.
var table = []*row{&reluRow, &geluRow, &geluTanhRow, &geluSigmoidRow, &softplusRow, &siluRow, &eluRow, &sigmoidGatedRow}

// Activation is an elementwise nonlinearity together with its first and
// second derivatives. Use the predefined values (GELU, GELUTanh, ReLU, ...),
// the constructors SigmoidGated and ELUAlpha, or define your own with New
// and NewParam; the zero value is not an activation. Activations are
// comparable: two are equal when they are the same definition with the
// same parameter.
//
// F, Deriv and Deriv2 are float64 scalar references usable without a graph;
// Apply adds the activation to a gorgonia graph.
type Activation struct {
	row   *row
	param dd // the row's parameter (β, α), or zero
}

// of returns r's activation with its default parameter.
func of(r *row) Activation { return Activation{row: r, param: r.defaultParam} }

// SigmoidGated returns the sigmoid-gated unit x·σ(β·x). β must be finite and
// positive (Apply and Validate report other values). β = √(8/π) matches
// GELU”(0); β = 1.702 is GELUSigmoid; β = 1 is SiLU.
func SigmoidGated(beta float64) Activation {
	return Activation{row: &sigmoidGatedRow, param: dd{hi: beta}}
}

// ELUAlpha returns ELU with the given α (finite and positive).
func ELUAlpha(alpha float64) Activation {
	return Activation{row: &eluRow, param: dd{hi: alpha}}
}

// All returns every predefined activation, in a stable order, plus the
// sigmoid-gated unit with β = √(8/π). Registered returns the ones users
// added.
func All() []Activation {
	out := make([]Activation, len(table))
	for i, r := range table {
		out[i] = of(r)
	}
	return out
}

// IsZero reports whether a is the zero Activation (no activation chosen).
// Layers in package nn treat it as "use the default, GELU".
func (a Activation) IsZero() bool { return a.row == nil }

// Validate reports whether a is a usable activation.
func (a Activation) Validate() error {
	r := a.row
	if r == nil {
		return fmt.Errorf("activation: zero Activation; want one of activation.GELU, activation.GELUTanh, activation.ReLU, ... or activation.SigmoidGated(β)")
	}
	if r.param != "" {
		return r.checkParam(a.param.hi)
	}
	return nil
}

// checkParam reports whether p is a usable value of r's parameter.
func (r *row) checkParam(p float64) error {
	switch {
	case r.validParam == nil && (!(p > 0) || math.IsInf(p, 0)):
		return fmt.Errorf("activation: %s needs a finite %s > 0, got %s = %v", r.name, r.param, r.param, p)
	case r.validParam == nil:
		return nil
	case math.IsNaN(p) || math.IsInf(p, 0):
		return fmt.Errorf("activation: %s needs a finite %s, got %s = %v", r.name, r.param, r.param, p)
	}
	if err := r.validParam(p); err != nil {
		return fmt.Errorf("activation: %s: %s = %v: %w", r.name, r.param, p, err)
	}
	return nil
}

// Name returns the activation's name as accepted by ParseActivation:
// "relu", "gelu", "gelu_tanh", "gelu_sigmoid", "softplus", "silu", "elu",
// "elu:α" for α ≠ 1, and "sigmoid_gated:β"; a user-defined activation's
// Def.Name, with ":p" when its parameter is not the default.
func (a Activation) Name() string {
	r := a.row
	switch {
	case r == nil:
		return "none"
	case r.param == "" || (a.param == r.defaultParam && !r.nameShowsParam):
		return r.name
	}
	return r.name + ":" + strconv.FormatFloat(a.param.hi, 'g', -1, 64)
}

// Title returns a label for tables and plot legends: "ReLU", "GELU",
// "GELU (tanh)", "GELU (sigmoid)", "Softplus", "SiLU", "ELU", "ELU (α=0.5)",
// "x·σ(βx), β=√(8/π)" or "x·σ(βx), β=1.5".
func (a Activation) Title() string {
	if a.row == nil {
		return "none"
	}
	return a.row.title(a.param.hi)
}

// Key returns Name without its parameter ("elu:0.5" → "elu"), for summary
// keys and file names.
func (a Activation) Key() string {
	k, _, _ := strings.Cut(a.Name(), ":")
	return k
}

// String returns Name.
func (a Activation) String() string { return a.Name() }

// Breakpoints returns the points where f, f' or f” is not smooth ({0} for
// ReLU and ELU, none for the others). Pass them to a quadrature when
// integrating a function of the activation: it converges slowly across a
// kink or a jump that is not an interval end.
func (a Activation) Breakpoints() []float64 {
	if a.row == nil {
		return nil
	}
	return append([]float64(nil), a.row.breakpoints...)
}

// CheckRange returns the interval on which CheckDerivatives compares the
// derivatives with finite differences (Def.CheckRange): the whole line,
// [-Inf, +Inf], unless a user's definition narrowed it.
func (a Activation) CheckRange() [2]float64 {
	if a.row == nil || a.row.checkRange == [2]float64{} {
		return [2]float64{math.Inf(-1), math.Inf(1)}
	}
	return a.row.checkRange
}

// ParseActivation returns the activation with the given name (see Name):
// a built-in one or one added with Register. "swish" is accepted for
// "silu", and "sigmoid_gated" without a β means β = √(8/π). A registered
// activation with a parameter is checked at the value given (WithParam).
func ParseActivation(name string) (Activation, error) {
	base, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ":")
	r := lookup(base)
	if r == nil {
		return Activation{}, fmt.Errorf("activation: unknown activation %q; want %s", name, wanted())
	}
	a := of(r)
	if !hasArg {
		return a, a.Validate()
	}
	if r.param == "" {
		return Activation{}, fmt.Errorf("activation: %q takes no parameter, got %q", base, arg)
	}
	v, err := strconv.ParseFloat(arg, 64)
	if err != nil {
		return Activation{}, fmt.Errorf("activation: %q: parameter %q is not a number", base, arg)
	}
	return a.WithParam(v)
}

// lookup finds a built-in row by name or alias, then a registered one.
func lookup(name string) *row {
	if name == "" {
		return nil
	}
	for _, r := range table {
		if r.name == name || r.alias == name {
			return r
		}
	}
	return registered(name)
}

// wanted lists the names ParseActivation accepts, for its error message.
func wanted() string {
	var names []string
	for _, r := range append(table[:len(table):len(table)], registeredRows()...) {
		n := r.name
		if r.param != "" {
			n += "[:" + r.param + "]"
		}
		names = append(names, n)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ParseActivations parses a comma-separated list of names (see
// ParseActivation), such as a -acts flag: "relu,gelu,gelu_tanh". The list
// must be non-empty and name each activation once.
func ParseActivations(list string) ([]Activation, error) {
	var out []Activation
	for _, name := range strings.Split(list, ",") {
		a, err := ParseActivation(name)
		if err != nil {
			return nil, err
		}
		for _, b := range out {
			if b == a {
				return nil, fmt.Errorf("activation: %q listed twice in %q", a.Name(), list)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// F returns f(x) in float64.
func (a Activation) F(x float64) float64 { return a.ref(0, x) }

// Deriv returns f'(x) in float64.
func (a Activation) Deriv(x float64) float64 { return a.ref(1, x) }

// Deriv2 returns f”(x) in float64.
func (a Activation) Deriv2(x float64) float64 { return a.ref(2, x) }

// Derivative returns f, f' or f” (order 0, 1 or 2) as a function, or nil
// for another order or the zero Activation.
func (a Activation) Derivative(order int) func(float64) float64 {
	if a.row == nil || order < 0 || order > 2 {
		return nil
	}
	f, p := a.row.ref[order], a.param
	return func(x float64) float64 { return f(x, p) }
}

func (a Activation) ref(order int, x float64) float64 {
	if a.row == nil {
		return math.NaN()
	}
	return a.row.ref[order](x, a.param)
}
