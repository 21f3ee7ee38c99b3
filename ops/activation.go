package ops

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Activation is an elementwise nonlinearity together with its first and
// second derivatives. Use the predefined values (GELU, GELUTanh, ReLU, ...) or
// the constructors SigmoidGated and ELUAlpha; the zero value is not an
// activation.
//
// F, Deriv and Deriv2 are float64 scalar references usable without a graph;
// Apply adds the activation to a gorgonia graph.
type Activation struct {
	kind  kind
	param dd // β for the sigmoid-gated unit, α for ELU
}

type kind uint8

const (
	kindNone kind = iota
	kindReLU
	kindGELU
	kindGELUTanh
	kindGELUSigmoid
	kindSoftplus
	kindSiLU
	kindELU
	kindSigmoidGated
)

var (
	// ReLU is max(0, x).
	ReLU = Activation{kind: kindReLU}
	// GELU is the exact GELU x·Φ(x) (PyTorch's nn.GELU()).
	GELU = Activation{kind: kindGELU}
	// GELUTanh is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
	// (PyTorch's nn.GELU(approximate="tanh"), used by GPT-2 and BERT's TF code).
	GELUTanh = Activation{kind: kindGELUTanh}
	// GELUSigmoid is x·σ(1.702·x), the sigmoid approximation of GELU.
	GELUSigmoid = Activation{kind: kindGELUSigmoid, param: sigmoidBeta}
	// Softplus is log(1 + e^x).
	Softplus = Activation{kind: kindSoftplus}
	// SiLU is x·σ(x), also called Swish.
	SiLU = Activation{kind: kindSiLU, param: dd{hi: 1}}
	// ELU is the exponential linear unit with α = 1.
	ELU = Activation{kind: kindELU, param: dd{hi: 1}}
)

// SigmoidGated returns the sigmoid-gated unit x·σ(β·x). β must be finite and
// positive (Apply and Validate report other values). β = √(8/π) matches
// GELU”(0); β = 1.702 is GELUSigmoid; β = 1 is SiLU.
func SigmoidGated(beta float64) Activation {
	return Activation{kind: kindSigmoidGated, param: dd{hi: beta}}
}

// ELUAlpha returns ELU with the given α (finite and positive).
func ELUAlpha(alpha float64) Activation {
	return Activation{kind: kindELU, param: dd{hi: alpha}}
}

// All returns every predefined activation, in a stable order, plus the
// sigmoid-gated unit with β = √(8/π).
func All() []Activation {
	return []Activation{ReLU, GELU, GELUTanh, GELUSigmoid, Softplus, SiLU, ELU, SigmoidGated(math.Sqrt(8 / math.Pi))}
}

// IsZero reports whether a is the zero Activation (no activation chosen).
// Layers in package nn treat it as "use the default, GELU".
func (a Activation) IsZero() bool { return a.kind == kindNone }

// Validate reports whether a is a usable activation.
func (a Activation) Validate() error {
	switch a.kind {
	case kindNone:
		return fmt.Errorf("ops: zero Activation; want one of ops.GELU, ops.GELUTanh, ops.ReLU, ... or ops.SigmoidGated(β)")
	case kindSigmoidGated:
		if !(a.param.hi > 0) || math.IsInf(a.param.hi, 0) {
			return fmt.Errorf("ops: sigmoid_gated needs a finite β > 0, got β = %v", a.param.hi)
		}
	case kindELU:
		if !(a.param.hi > 0) || math.IsInf(a.param.hi, 0) {
			return fmt.Errorf("ops: elu needs a finite α > 0, got α = %v", a.param.hi)
		}
	}
	if a.kind > kindSigmoidGated {
		return fmt.Errorf("ops: unknown activation kind %d", a.kind)
	}
	return nil
}

// Name returns the activation's name as accepted by ParseActivation:
// "relu", "gelu", "gelu_tanh", "gelu_sigmoid", "softplus", "silu", "elu",
// "elu:α" for α ≠ 1, and "sigmoid_gated:β".
func (a Activation) Name() string {
	switch a.kind {
	case kindReLU:
		return "relu"
	case kindGELU:
		return "gelu"
	case kindGELUTanh:
		return "gelu_tanh"
	case kindGELUSigmoid:
		return "gelu_sigmoid"
	case kindSoftplus:
		return "softplus"
	case kindSiLU:
		return "silu"
	case kindELU:
		if a.param.hi == 1 {
			return "elu"
		}
		return "elu:" + strconv.FormatFloat(a.param.hi, 'g', -1, 64)
	case kindSigmoidGated:
		return "sigmoid_gated:" + strconv.FormatFloat(a.param.hi, 'g', -1, 64)
	}
	return "none"
}

// Title returns a label for tables and plot legends: "ReLU", "GELU",
// "GELU (tanh)", "GELU (sigmoid)", "Softplus", "SiLU", "ELU", "ELU (α=0.5)",
// "x·σ(βx), β=√(8/π)" or "x·σ(βx), β=1.5".
func (a Activation) Title() string {
	switch a.kind {
	case kindReLU:
		return "ReLU"
	case kindGELU:
		return "GELU"
	case kindGELUTanh:
		return "GELU (tanh)"
	case kindGELUSigmoid:
		return "GELU (sigmoid)"
	case kindSoftplus:
		return "Softplus"
	case kindSiLU:
		return "SiLU"
	case kindELU:
		if a.param.hi == 1 {
			return "ELU"
		}
		return "ELU (α=" + strconv.FormatFloat(a.param.hi, 'g', -1, 64) + ")"
	case kindSigmoidGated:
		if a.param.hi == math.Sqrt(8/math.Pi) {
			return "x·σ(βx), β=√(8/π)"
		}
		return "x·σ(βx), β=" + strconv.FormatFloat(a.param.hi, 'g', 4, 64)
	}
	return "none"
}

// Key returns Name without its parameter ("elu:0.5" → "elu"), for summary
// keys and file names.
func (a Activation) Key() string {
	k, _, _ := strings.Cut(a.Name(), ":")
	return k
}

// String returns Name.
func (a Activation) String() string { return a.Name() }

// ParseActivation returns the activation with the given name (see Name).
// "swish" is accepted for "silu", and "sigmoid_gated" without a β means
// β = √(8/π).
func ParseActivation(name string) (Activation, error) {
	base, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ":")
	var a Activation
	switch base {
	case "relu":
		a = ReLU
	case "gelu":
		a = GELU
	case "gelu_tanh":
		a = GELUTanh
	case "gelu_sigmoid":
		a = GELUSigmoid
	case "softplus":
		a = Softplus
	case "silu", "swish":
		a = SiLU
	case "elu":
		a = ELU
	case "sigmoid_gated":
		a = SigmoidGated(math.Sqrt(8 / math.Pi))
	default:
		return Activation{}, fmt.Errorf("ops: unknown activation %q; want relu, gelu, gelu_tanh, gelu_sigmoid, softplus, silu, elu[:α] or sigmoid_gated[:β]", name)
	}
	if hasArg {
		if a.kind != kindELU && a.kind != kindSigmoidGated {
			return Activation{}, fmt.Errorf("ops: activation %q takes no parameter, got %q", base, arg)
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			return Activation{}, fmt.Errorf("ops: activation %q: parameter %q is not a number", base, arg)
		}
		a.param = dd{hi: v}
	}
	return a, a.Validate()
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
				return nil, fmt.Errorf("ops: activation %q listed twice in %q", a.Name(), list)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// F returns f(x) in float64.
func (a Activation) F(x float64) float64 {
	switch a.kind {
	case kindReLU:
		return reluF(x)
	case kindGELU:
		return geluF(x)
	case kindGELUTanh:
		return gatedF(x, tanhGate(x))
	case kindGELUSigmoid, kindSiLU, kindSigmoidGated:
		return gatedF(x, linearGate(a.param, x))
	case kindSoftplus:
		return softplusF(x)
	case kindELU:
		return eluF(x, a.param.hi)
	}
	return math.NaN()
}

// Deriv returns f'(x) in float64.
func (a Activation) Deriv(x float64) float64 {
	switch a.kind {
	case kindReLU:
		return reluD1(x)
	case kindGELU:
		return geluD1(x)
	case kindGELUTanh:
		return gatedD1(x, tanhGate(x))
	case kindGELUSigmoid, kindSiLU, kindSigmoidGated:
		return gatedD1(x, linearGate(a.param, x))
	case kindSoftplus:
		return softplusD1(x)
	case kindELU:
		return eluD1(x, a.param.hi)
	}
	return math.NaN()
}

// Deriv2 returns f”(x) in float64.
func (a Activation) Deriv2(x float64) float64 {
	switch a.kind {
	case kindReLU:
		return reluD2(x)
	case kindGELU:
		return geluD2(x)
	case kindGELUTanh:
		return gatedD2(x, tanhGate(x))
	case kindGELUSigmoid, kindSiLU, kindSigmoidGated:
		return gatedD2(x, linearGate(a.param, x))
	case kindSoftplus:
		return softplusD2(x)
	case kindELU:
		return eluD2(x, a.param.hi)
	}
	return math.NaN()
}

// derivative returns f, f' or f” for order 0, 1 or 2.
func (a Activation) derivative(order int) func(float64) float64 {
	switch order {
	case 0:
		return a.F
	case 1:
		return a.Deriv
	}
	return a.Deriv2
}
