package activation_test

// User-defined activations: New and NewParam, the derivative check, the
// registry, and the kernels' handling of a user's panic. The graph op,
// double backward and the hash are tested with the built-in activations
// in act_op_test.go (withOwn adds the user-defined ones there); Mish's
// accuracy in mish_test.go.

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// sig is the logistic function, written so that neither side cancels.
func sig(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}

// swishBeta is x·σ(βx) as a user would define it, with β as the family's
// parameter (the package's SigmoidGated is the same function).
var swishBeta = activation.ParamDef{
	Name: "swish_beta", Title: "Swish", Param: "β", Default: 1,
	Valid: func(b float64) error {
		if b <= 0 {
			return errors.New("want β > 0")
		}
		return nil
	},
	F: func(x, b float64) float64 { return x * sig(b*x) },
	D1: func(x, b float64) float64 {
		s, r := sig(b*x), sig(-b*x)
		return s + b*x*s*r
	},
	D2: func(x, b float64) float64 {
		s, r := sig(b*x), sig(-b*x)
		return b * s * r * (2 + b*x*(r-s))
	},
}

func mustParam(t testing.TB, d activation.ParamDef, p float64) activation.Activation {
	t.Helper()
	a, err := activation.NewParam(d)
	if err != nil {
		t.Fatal(err)
	}
	if a, err = a.WithParam(p); err != nil {
		t.Fatal(err)
	}
	return a
}

// withOwn is every built-in activation plus user-defined ones: Mish and
// x·σ(1.5x) as a NewParam family.
func withOwn(t testing.TB) []activation.Activation {
	if errMish != nil {
		t.Fatal(errMish)
	}
	return append(activation.All(), mishAct, mustParam(t, swishBeta, 1.5))
}

// The check's tolerance holds for every built-in activation, whose
// derivatives the mpmath test confirms to a few ulp.
func TestCheckDerivativesPassesBuiltins(t *testing.T) {
	for _, a := range append(activation.All(), activation.ELUAlpha(0.3), activation.ELUAlpha(4), activation.SigmoidGated(0.2), activation.SigmoidGated(9)) {
		if err := a.CheckDerivatives(); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

var worstAt = regexp.MustCompile(`worst at x = (\S+):`)

// A wrong derivative is refused with an error that names it and the
// worst point, and that point is one where the derivative is wrong.
func TestNewRefusesWrongDerivatives(t *testing.T) {
	f := func(x float64) float64 { return mish(0, x) }
	d1 := func(x float64) float64 { return mish(1, x) }
	d2 := func(x float64) float64 { return mish(2, x) }
	for _, c := range []struct {
		name         string
		wrongD1      func(float64) float64
		wrongD2      func(float64) float64
		want         string
		wrongAtWorst func(x float64) bool
	}{
		// The term 2g of f'' = 2g + x·g' dropped (g = (f' − f/x)/x).
		{"d2_term", nil, func(x float64) float64 { return mish(2, x) - 2*mishG(x) },
			"f'' disagrees with finite differences of f'", nil},
		// f'' wrong by a bump of 1e-4 around x = 3 only.
		{"d2_bump", nil, func(x float64) float64 { return mish(2, x) + 1e-4*math.Exp(-(x-3)*(x-3)) },
			"f'' disagrees with finite differences of f'", func(x float64) bool { return math.Abs(x-3) < 1.5 }},
		// f' with the product rule's second term's sign flipped.
		{"d1_sign", func(x float64) float64 { return mish(1, x) - 2*x*mishG(x) }, nil,
			"f' disagrees with finite differences of f", nil},
	} {
		def := activation.Def{Name: c.name, F: f, D1: d1, D2: d2}
		if c.wrongD1 != nil {
			def.D1 = c.wrongD1
		}
		if c.wrongD2 != nil {
			def.D2 = c.wrongD2
		}
		a, err := activation.New(def)
		if err == nil || !strings.Contains(err.Error(), c.want) || !a.IsZero() {
			t.Errorf("%s: New gave (%v, %v), want the zero Activation and an error containing %q", c.name, a, err, c.want)
			continue
		}
		m := worstAt.FindStringSubmatch(err.Error())
		if m == nil {
			t.Errorf("%s: error %q names no point", c.name, err)
			continue
		}
		x, perr := strconv.ParseFloat(m[1], 64)
		got, want := def.D2(x), d2(x)
		if c.wrongD1 != nil {
			got, want = def.D1(x), d1(x)
		}
		if perr != nil || !(math.Abs(got-want) > 1e-6*math.Abs(want)) || c.wrongAtWorst != nil && !c.wrongAtWorst(x) {
			t.Errorf("%s: the error names x = %s, where the derivative is %v and the true one %v: %v", c.name, m[1], got, want, err)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

// mishG is g = t' in f' = t + x·g, from the closed forms of f and f'.
func mishG(x float64) float64 {
	if x == 0 {
		return 0.32 // σ(0)·(1 − tanh²(log 2)) = 0.5·(1 − 0.36)
	}
	return (mish(1, x) - mish(0, x)/x) / x
}

// Kinks: without its breakpoint ReLU is refused with a hint, with it
// accepted, and a value at the breakpoint that is neither one-sided limit
// is refused.
func TestNewBreakpoints(t *testing.T) {
	relu := activation.Def{Name: "my_relu", F: activation.ReLU.F, D1: activation.ReLU.Deriv, D2: activation.ReLU.Deriv2}
	_, err := activation.New(relu)
	if err == nil || !strings.Contains(err.Error(), "worst at x = 0:") || !strings.Contains(err.Error(), "Breakpoints") {
		t.Errorf("ReLU without its breakpoint: %v, want an error at x = 0 suggesting Breakpoints", err)
	}
	relu.Breakpoints = []float64{0}
	a, err := activation.New(relu)
	if err != nil {
		t.Fatalf("ReLU with its breakpoint: %v", err)
	}
	if got := a.Breakpoints(); len(got) != 1 || got[0] != 0 {
		t.Errorf("Breakpoints() = %v, want [0]", got)
	}
	relu.D1 = func(x float64) float64 {
		if x == 0 {
			return 0.5
		}
		return activation.ReLU.Deriv(x)
	}
	if _, err := activation.New(relu); err == nil || !strings.Contains(err.Error(), "left limit is 0 and the right one 1") {
		t.Errorf("f'(0) = 0.5 at the breakpoint: %v, want an error naming both limits", err)
	}
	elu := activation.ELUAlpha(0.5)
	if _, err := activation.New(activation.Def{Name: "my_elu", F: elu.F, D1: elu.Deriv, D2: elu.Deriv2, Breakpoints: []float64{0}}); err != nil {
		t.Errorf("ELU with α = 0.5 (f' jumps at 0): %v", err)
	}
}

func TestNewRejectsBadDefinitions(t *testing.T) {
	id := func(x float64) float64 { return x }
	one := func(float64) float64 { return 1 }
	zero := func(float64) float64 { return 0 }
	nan := func(float64) float64 { return math.NaN() }
	for _, c := range []struct {
		def  activation.Def
		want string
	}{
		{activation.Def{Name: "lin", F: id, D1: one}, "F, D1 and D2 are all required (nil: [D2])"},
		{activation.Def{Name: "", F: id, D1: one, D2: zero}, `name ""`},
		{activation.Def{Name: "Mish", F: id, D1: one, D2: zero}, "lower-case"},
		{activation.Def{Name: "a:b", F: id, D1: one, D2: zero}, "lower-case"},
		{activation.Def{Name: "a,b", F: id, D1: one, D2: zero}, "lower-case"},
		{activation.Def{Name: "2x", F: id, D1: one, D2: zero}, "lower-case"},
		{activation.Def{Name: "gelu", F: id, D1: one, D2: zero}, "built-in"},
		{activation.Def{Name: "swish", F: id, D1: one, D2: zero}, "built-in"},
		{activation.Def{Name: "lin", F: id, D1: one, D2: zero, Breakpoints: []float64{math.NaN()}}, "breakpoint NaN"},
		{activation.Def{Name: "lin", F: nan, D1: one, D2: zero}, "f(x) is NaN at x = 0"},
		{activation.Def{Name: "lin", F: id, D1: one, D2: func(x float64) float64 {
			if x > 50 {
				panic("overflow")
			}
			return 0
		}}, "f'' panicked at x = 5"},
	} {
		a, err := activation.New(c.def)
		if err == nil || !strings.Contains(err.Error(), c.want) || !a.IsZero() {
			t.Errorf("New(%q): (%v, %v), want an error containing %q", c.def.Name, a, err, c.want)
		}
	}
	if a, err := activation.New(activation.Def{Name: "lin", F: id, D1: one, D2: zero}); err != nil || a.Title() != "lin" || a.Name() != "lin" {
		t.Errorf("the identity: (%v %q, %v), want it accepted with its name as title", a, a.Title(), err)
	}
}

// A derivative can be right at one parameter value and wrong at others:
// forgetting the factor β in f' of x·σ(βx) is invisible at β = 1.
// WithParam and ParseActivation check each value.
func TestNewParamChecksEachValue(t *testing.T) {
	forgot := swishBeta
	forgot.Name = "swish_forgot"
	forgot.D1 = func(x, b float64) float64 { s, r := sig(b*x), sig(-b*x); return s + x*s*r }
	a, err := activation.NewParam(forgot)
	if err != nil {
		t.Fatalf("at the default β = 1 the forgotten β cannot show: %v", err)
	}
	if _, err := a.WithParam(2); err == nil || !strings.Contains(err.Error(), "swish_forgot:2: f' disagrees") {
		t.Errorf("WithParam(2): %v, want the derivative check's error", err)
	}
	if err := activation.Register(a); err != nil {
		t.Fatal(err)
	}
	if _, err := activation.ParseActivation("swish_forgot:2"); err == nil || !strings.Contains(err.Error(), "f' disagrees") {
		t.Errorf("ParseActivation(swish_forgot:2): %v, want the derivative check's error", err)
	}

	sb := swishBeta
	sb.Name = "swish_beta_params"
	b, err := activation.NewParam(sb)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := b.WithParam(2)
	if err != nil {
		t.Fatal(err)
	}
	if b2.Name() != "swish_beta_params:2" || b2.Title() != "Swish (β=2)" || b.Name() != "swish_beta_params" || b.Title() != "Swish" || b2.Key() != "swish_beta_params" {
		t.Errorf("names and titles %q %q %q %q", b.Name(), b.Title(), b2.Name(), b2.Title())
	}
	// Independent of the family's code: the package's own x·σ(βx).
	for _, x := range []float64{-7, -1.3, 0.2, 4} {
		ref := activation.SigmoidGated(2)
		for k, pair := range [][2]float64{{b2.F(x), ref.F(x)}, {b2.Deriv(x), ref.Deriv(x)}, {b2.Deriv2(x), ref.Deriv2(x)}} {
			if math.Abs(pair[0]-pair[1]) > 1e-14*math.Max(1, math.Abs(pair[1])) {
				t.Errorf("f^(%d)(%v) at β = 2: %v, SigmoidGated(2) gives %v", k, x, pair[0], pair[1])
			}
		}
	}
	for _, p := range []float64{-1, 0, math.NaN(), math.Inf(1)} {
		if _, err := b.WithParam(p); err == nil {
			t.Errorf("WithParam(%v) accepted", p)
		}
	}
	if _, err := b.WithParam(-1); err == nil || !strings.Contains(err.Error(), "β = -1: want β > 0") {
		t.Errorf("WithParam(-1): %v, want the family's Valid message", err)
	}
	if _, err := activation.GELU.WithParam(2); err == nil {
		t.Error("GELU.WithParam(2) accepted")
	}
	if e, err := activation.ELU.WithParam(0.5); err != nil || e != activation.ELUAlpha(0.5) {
		t.Errorf("ELU.WithParam(0.5) = %v, %v; want ELUAlpha(0.5)", e, err)
	}
	bad := swishBeta
	bad.Name, bad.Default = "swish_bad_default", -1
	if _, err := activation.NewParam(bad); err == nil || !strings.Contains(err.Error(), "Default") {
		t.Errorf("a Default the family's Valid refuses: %v", err)
	}
	bad.Default, bad.Param = 1, ""
	if _, err := activation.NewParam(bad); err == nil || !strings.Contains(err.Error(), "Param") {
		t.Errorf("no parameter symbol: %v", err)
	}
}

func TestRegister(t *testing.T) {
	a := mustParam(t, activation.ParamDef{Name: "reg_swish", Param: "β", Default: 1, F: swishBeta.F, D1: swishBeta.D1, D2: swishBeta.D2}, 1)
	if _, err := activation.ParseActivation("reg_swish"); err == nil || !strings.Contains(err.Error(), "unknown activation") {
		t.Fatalf("an unregistered activation parsed: %v", err)
	}
	if err := activation.Register(a); err != nil {
		t.Fatal(err)
	}
	if err := activation.Register(a); err != nil {
		t.Errorf("registering the same activation again: %v, want nil", err)
	}
	for name, want := range map[string]string{"reg_swish": "reg_swish", " REG_SWISH ": "reg_swish", "reg_swish:1": "reg_swish", "reg_swish:0.5": "reg_swish:0.5"} {
		got, err := activation.ParseActivation(name)
		if err != nil || got.Name() != want {
			t.Errorf("ParseActivation(%q) = %v, %v; want %s", name, got, err, want)
		}
	}
	if got, _ := activation.ParseActivation("reg_swish"); got != a {
		t.Errorf("ParseActivation gave %v, not the registered activation", got)
	}
	as, err := activation.ParseActivations("relu,reg_swish:3")
	if err != nil || len(as) != 2 || as[1].Title() != "reg_swish (β=3)" {
		t.Errorf("ParseActivations: %v, %v", as, err)
	}
	if !containsAct(activation.Registered(), a) {
		t.Errorf("Registered() = %v lacks %v", activation.Registered(), a)
	}
	if _, err := activation.ParseActivation("no_such_act"); err == nil || !strings.Contains(err.Error(), "reg_swish[:β]") {
		t.Errorf("the unknown-name error does not list the registered activation: %v", err)
	}

	other := mustParam(t, activation.ParamDef{Name: "reg_swish", Param: "β", Default: 1, F: swishBeta.F, D1: swishBeta.D1, D2: swishBeta.D2}, 1)
	if err := activation.Register(other); err == nil || !strings.Contains(err.Error(), `"reg_swish" is registered already`) {
		t.Errorf("another definition under a registered name: %v", err)
	}
	if err := activation.Register(activation.GELU); err == nil || !strings.Contains(err.Error(), "built in") {
		t.Errorf("registering GELU: %v", err)
	}
	if err := activation.Register(activation.Activation{}); err == nil {
		t.Error("registering the zero Activation succeeded")
	}
}

func containsAct(as []activation.Activation, a activation.Activation) bool {
	for _, b := range as {
		if b == a {
			return true
		}
	}
	return false
}

// Registering and parsing from many goroutines at once (run with -race):
// every name is registered once, and every registered name parses.
func TestRegisterConcurrently(t *testing.T) {
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("conc_%d", i%(n/2)) // each name twice
			a, err := activation.New(activation.Def{Name: name, F: activation.SiLU.F, D1: activation.SiLU.Deriv, D2: activation.SiLU.Deriv2})
			if err == nil {
				err = activation.Register(a)
			}
			errs[i] = err
			_, errs[n+i] = activation.ParseActivation("relu")
			activation.Registered()
		}()
	}
	wg.Wait()
	failed := 0
	for i, err := range errs {
		switch {
		case err == nil:
		case i < n && strings.Contains(err.Error(), "registered already"):
			failed++
		default:
			t.Errorf("goroutine %d: %v", i%n, err)
		}
	}
	if failed != n/2 {
		t.Errorf("%d registrations refused, want %d (each name once)", failed, n/2)
	}
	for i := range n / 2 {
		if _, err := activation.ParseActivation(fmt.Sprintf("conc_%d", i)); err != nil {
			t.Error(err)
		}
	}
}

// A panic in a user's function, at an input the check did not visit,
// comes back from the kernels and from the graph as an error, also when
// the kernel runs on the parallel workers.
func TestUserPanicIsAnError(t *testing.T) {
	const bad = 3.3125 // not on the check's grid, and a float32
	a, err := activation.New(activation.Def{Name: "fragile", D1: activation.SiLU.Deriv, D2: activation.SiLU.Deriv2,
		F: func(x float64) float64 {
			if x == bad {
				panic("x is 3.3125")
			}
			return activation.SiLU.F(x)
		}})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 100000) // over several workers
	x[77777] = bad
	err = activation.Forward(a, make([]float64, len(x)), x)
	if err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "x is 3.3125") {
		t.Errorf("Forward: %v, want the panic as an error", err)
	}
	// The loop is pooled: the next call must not report the old panic.
	x[77777] = 0
	if err := activation.Forward(a, make([]float64, len(x)), x); err != nil {
		t.Errorf("Forward after the panic: %v", err)
	}

	g, _ := graph.New(tensor.Float32, 1)
	xn, _ := g.Input("x", 4)
	y, err := a.Apply(xn)
	if err != nil {
		t.Fatal(err)
	}
	loss, _ := G.Sum(y)
	m, err := g.Compile(loss, graph.WithRespectTo(xn))
	if err != nil {
		t.Fatal(err)
	}
	m.Set(xn, tensor.New(tensor.WithBacking([]float32{1, 2, bad, 4})))
	if err := m.Run(); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("Machine.Run: %v, want the panic as an error", err)
	}
}

// The slice kernels of a user-defined activation, on enough elements to
// run on several workers, give the float64 reference times g, rounded
// once to the element type.
func TestOwnKernelsRoundOnce(t *testing.T) {
	for _, a := range withOwn(t)[len(activation.All()):] {
		const n = 50000
		x64, g64 := make([]float64, n), make([]float64, n)
		x32, g32 := make([]float32, n), make([]float32, n)
		for i := range n {
			x32[i] = float32(-12 + 24*float64(i)/n + 1e-3*math.Sin(float64(i)))
			g32[i] = float32(1 + 0.5*math.Cos(float64(i)))
			x64[i], g64[i] = float64(x32[i])*(1+1e-9), float64(g32[i])
		}
		for k, ref := range []func(float64) float64{a.F, a.Deriv, a.Deriv2} {
			d64, d32 := make([]float64, n), make([]float32, n)
			var err64, err32 error
			switch k {
			case 0:
				err64, err32 = activation.Forward(a, d64, x64), activation.Forward(a, d32, x32)
			case 1:
				err64, err32 = activation.Backward(a, d64, x64, g64), activation.Backward(a, d32, x32, g32)
			case 2:
				err64, err32 = activation.Backward2(a, d64, x64, g64), activation.Backward2(a, d32, x32, g32)
			}
			if err := errors.Join(err64, err32); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				w64, w32 := ref(x64[i]), ref(float64(x32[i]))
				if k > 0 {
					w64, w32 = g64[i]*w64, float64(g32[i])*w32
				}
				if d64[i] != w64 || d32[i] != float32(w32) {
					t.Fatalf("%s f^(%d) at %v: float64 %v, want %v; float32 %v, want %v", a, k, x64[i], d64[i], w64, d32[i], float32(w32))
				}
			}
		}
	}
}
