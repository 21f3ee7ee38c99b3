package activation_test

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
)

// sinDef is sin with its exact derivatives: correct everywhere, but at
// |x| ≥ 1e7 or so a finite difference's smallest step (about 2⁻²⁶·|x|, so
// that x ± h differ from x) spans many periods, and no finite difference
// means anything there.
var sinDef = activation.Def{Name: "my_sin", F: math.Sin, D1: math.Cos, D2: func(x float64) float64 { return -math.Sin(x) }}

// CheckRange tells the derivative check where finite differences make
// sense: without it a correct sin is refused at a point far out; with it
// accepted; and a CheckRange that leaves out [-1, 1], or is not a range,
// is refused.
func TestNewCheckRange(t *testing.T) {
	_, err := activation.New(sinDef)
	if err == nil || !strings.Contains(err.Error(), "CheckRange") {
		t.Errorf("sin without CheckRange: %v, want a refusal that suggests CheckRange", err)
	}
	d := sinDef
	d.CheckRange = [2]float64{-1e4, 1e4}
	a, err := activation.New(d)
	if err != nil {
		t.Fatalf("sin with CheckRange [-1e4, 1e4]: %v", err)
	}
	if got := a.CheckRange(); got != d.CheckRange {
		t.Errorf("CheckRange() = %v, want %v", got, d.CheckRange)
	}
	if got := activation.GELU.CheckRange(); got != [2]float64{math.Inf(-1), math.Inf(1)} {
		t.Errorf("GELU's CheckRange() = %v, want the whole line", got)
	}
	// Inside the range a wrong derivative is still refused.
	wrong := d
	wrong.D2 = func(x float64) float64 { return -math.Sin(x) + 1e-3*math.Exp(-(x-50)*(x-50)) }
	if _, err := activation.New(wrong); err == nil || !strings.Contains(err.Error(), "f'' disagrees") {
		t.Errorf("sin with a wrong f'' near 50, CheckRange [-1e4, 1e4]: %v, want it refused", err)
	}
	for _, r := range [][2]float64{{0, 1e4}, {-1e4, 0.5}, {math.NaN(), 1}, {5, -5}, {-1, math.NaN()}} {
		d.CheckRange = r
		if _, err := activation.New(d); err == nil || !strings.Contains(err.Error(), "CheckRange") || !strings.Contains(err.Error(), "[-1, 1]") {
			t.Errorf("CheckRange %v: %v, want an error saying it must contain [-1, 1]", r, err)
		}
	}
	p := activation.ParamDef{Name: "my_sin_p", Param: "ω", Default: 1,
		F: func(x, w float64) float64 { return math.Sin(w * x) }, D1: func(x, w float64) float64 { return w * math.Cos(w*x) },
		D2: func(x, w float64) float64 { return -w * w * math.Sin(w*x) }}
	if _, err := activation.NewParam(p); err == nil {
		t.Error("NewParam: sin(ωx) without CheckRange accepted")
	}
	p.CheckRange = [2]float64{-1e4, 1e4}
	if a, err := activation.NewParam(p); err != nil {
		t.Errorf("NewParam: sin(ωx) with CheckRange: %v", err)
	} else if _, err := a.WithParam(2); err != nil {
		t.Errorf("sin(2x) with CheckRange: %v", err)
	}
}

// An activation must be defined on the whole real line, since the kernels
// apply it to any input: an F (or D1, D2) that is NaN on part of it is
// refused, with the nearest such point to 0 named, CheckRange or not.
func TestNewRefusesNaN(t *testing.T) {
	sqrtRelu := activation.Def{Name: "my_sqrt", // √x: NaN for x < 0
		F:  math.Sqrt,
		D1: func(x float64) float64 { return 0.5 / math.Sqrt(x) },
		D2: func(x float64) float64 { return -0.25 / (x * math.Sqrt(x)) },
	}
	for _, r := range [][2]float64{{}, {-1, 1e4}} {
		sqrtRelu.CheckRange = r
		_, err := activation.New(sqrtRelu)
		if err == nil || !strings.Contains(err.Error(), "f(x) is NaN") || !strings.Contains(err.Error(), "x = -1e-08") {
			t.Errorf("√x, CheckRange %v: %v, want f(x) NaN named at x = -1e-08", r, err)
		}
	}
	// x² on x ≥ 0 and NaN elsewhere, derivatives alike: enough points are
	// finite for finite differences, and every one of them agrees.
	half := func(f func(float64) float64) func(float64) float64 {
		return func(x float64) float64 {
			if x < 0 {
				return math.NaN()
			}
			return f(x)
		}
	}
	halfSq := activation.Def{Name: "my_half_sq", F: half(func(x float64) float64 { return x * x }),
		D1: half(func(x float64) float64 { return 2 * x }), D2: half(func(float64) float64 { return 2 })}
	if _, err := activation.New(halfSq); err == nil || !strings.Contains(err.Error(), "f(x) is NaN") || !strings.Contains(err.Error(), "x = -1e-08") {
		t.Errorf("x² for x ≥ 0, NaN elsewhere: %v, want f(x) NaN named at x = -1e-08", err)
	}
	// f finite everywhere, f'' NaN beyond 1e6: refused although those
	// points are outside CheckRange.
	lin := activation.Def{Name: "my_lin", F: func(x float64) float64 { return x }, D1: func(float64) float64 { return 1 },
		D2: func(x float64) float64 {
			if x > 1e6 {
				return math.NaN()
			}
			return 0
		}, CheckRange: [2]float64{-100, 100}}
	if _, err := activation.New(lin); err == nil || !strings.Contains(err.Error(), "f''(x) is NaN") {
		t.Errorf("f'' NaN beyond 1e6: %v, want it refused", err)
	}
}
