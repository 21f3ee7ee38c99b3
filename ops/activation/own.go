package activation

// Activations users define: a row built from their float64 references,
// checked against finite differences before it is handed out (check.go),
// and a registry that lets ParseActivation, and so the examples' -acts
// flags, find it by name.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// Def defines an activation without a parameter for New: its name, its
// title and its float64 references f, f' and f”.
//
// F, D1 and D2 are called from several goroutines at once (the kernels
// split a tensor over the cores), so they must be safe for concurrent use;
// pure functions of x are. They should be accurate to a few ulp of float64
// wherever a result is wanted: the float32 kernels round their results
// once to float32, the float64 kernels use them as they are. A panic in
// them is returned as an error by the kernels and the graph op, and
// propagates from the scalar methods (F, Deriv, Deriv2) and package
// analysis, as any callback's does.
type Def struct {
	// Name is what ParseActivation and the -acts flags take once the
	// activation is registered: a lower-case letter, then lower-case
	// letters, digits or '_' (at most 64), and not a built-in name.
	Name string
	// Title labels tables and plot legends; empty: Name.
	Title string
	// F, D1 and D2 are f, f' and f”.
	F, D1, D2 func(x float64) float64
	// Breakpoints are the points where f, f' or f” is not smooth (a kink,
	// a jump): the derivative check then compares one-sided differences
	// there, and package analysis splits its integrals at them. At a
	// breakpoint D1 and D2 may give either one-sided value (ReLU's f'(0)
	// is 0, the left one, as in PyTorch).
	Breakpoints []float64
	// CheckRange is where CheckDerivatives compares the derivatives with
	// finite differences, [CheckRange[0], CheckRange[1]]; the zero value
	// means the whole real line. Narrow it for an f that varies faster,
	// far out, than finite differences can follow (sin(x) at x = 1e13,
	// where the check's steps, about 2⁻³¹·|x| or more so that rounding
	// does not swamp f(x + h) − f(x − h), span hundreds of periods). It must
	// contain [-1, 1]; the bounds may be ±Inf. Outside it F, D1 and D2 are
	// still required not to be NaN.
	CheckRange [2]float64
}

// ParamDef defines a family of activations with one parameter for
// NewParam: f(x; p), f'(x; p) and f”(x; p), derivatives in x.
// See Def for the fields they share.
type ParamDef struct {
	// Name and Title are as in Def; the title of a value other than the
	// default adds it: "Swish (β=2)".
	Name, Title string
	// Param is the parameter's symbol in names and titles ("β"); required.
	Param string
	// Default is the parameter's value when a name gives none ("mish_beta"
	// as opposed to "mish_beta:2").
	Default float64
	// Valid reports whether p is a usable value, for WithParam and
	// ParseActivation to refuse others; p is always finite. Nil: every
	// finite p.
	Valid func(p float64) error
	// F, D1 and D2 are f, f' and f” at parameter p.
	F, D1, D2   func(x, p float64) float64
	Breakpoints []float64
	CheckRange  [2]float64
}

// New returns the activation d defines, after checking D1 and D2 against
// finite differences of F and D1 (see CheckDerivatives). It works wherever
// the built-in activations do: Apply (with a differentiable backward, so
// double backward works), the slice kernels Forward, Backward, Backward2
// (portable loops over the cores), package analysis, and, once registered
// (Register), ParseActivation and the examples' -acts flags.
func New(d Def) (Activation, error) {
	if d.F == nil || d.D1 == nil || d.D2 == nil {
		return Activation{}, fmt.Errorf("activation.New %q: F, D1 and D2 are all required (nil: %s)", d.Name, nilFuncs(d.F == nil, d.D1 == nil, d.D2 == nil))
	}
	r, err := newRow("activation.New", d.Name, d.Title, d.Breakpoints, d.CheckRange)
	if err != nil {
		return Activation{}, err
	}
	r.ref = noParam(d.F, d.D1, d.D2)
	a := Activation{row: r}
	if err := a.CheckDerivatives(); err != nil {
		return Activation{}, fmt.Errorf("activation.New %q: %w", d.Name, err)
	}
	return a, nil
}

// NewParam returns the activation d defines at its Default parameter,
// checked there as New checks; WithParam gives other values.
func NewParam(d ParamDef) (Activation, error) {
	if d.F == nil || d.D1 == nil || d.D2 == nil {
		return Activation{}, fmt.Errorf("activation.NewParam %q: F, D1 and D2 are all required (nil: %s)", d.Name, nilFuncs(d.F == nil, d.D1 == nil, d.D2 == nil))
	}
	if d.Param == "" {
		return Activation{}, fmt.Errorf("activation.NewParam %q: Param, the parameter's symbol, is empty; use New for an activation without a parameter", d.Name)
	}
	r, err := newRow("activation.NewParam", d.Name, d.Title, d.Breakpoints, d.CheckRange)
	if err != nil {
		return Activation{}, err
	}
	title, def := r.title(0), d.Default
	r.title = func(p float64) string {
		if p == def {
			return title
		}
		return title + " (" + d.Param + "=" + strconv.FormatFloat(p, 'g', -1, 64) + ")"
	}
	r.param, r.defaultParam = d.Param, dd{hi: d.Default}
	valid := d.Valid
	r.validParam = func(p float64) error {
		if valid == nil {
			return nil
		}
		return valid(p)
	}
	f, d1, d2 := d.F, d.D1, d.D2
	r.ref = [3]func(float64, dd) float64{
		func(x float64, p dd) float64 { return f(x, p.hi) },
		func(x float64, p dd) float64 { return d1(x, p.hi) },
		func(x float64, p dd) float64 { return d2(x, p.hi) },
	}
	if err := r.checkParam(d.Default); err != nil {
		return Activation{}, fmt.Errorf("activation.NewParam %q: Default: %w", d.Name, err)
	}
	a := of(r)
	if err := a.CheckDerivatives(); err != nil {
		return Activation{}, fmt.Errorf("activation.NewParam %q: %w", d.Name, err)
	}
	return a, nil
}

// WithParam returns a with its parameter (ELU's α, the sigmoid-gated unit's
// β, a NewParam family's) set to p. For a user-defined family it checks the
// derivatives at p as New does, since a derivative may be right at one
// value and wrong at another (a forgotten factor β is invisible at β = 1).
func (a Activation) WithParam(p float64) (Activation, error) {
	if err := a.Validate(); err != nil {
		return Activation{}, err
	}
	if a.row.param == "" {
		return Activation{}, fmt.Errorf("activation: %s takes no parameter, got %v", a.row.name, p)
	}
	b := Activation{row: a.row, param: dd{hi: p}}
	if p == a.row.defaultParam.hi {
		b.param = a.row.defaultParam // with its low part, if it has one
	}
	if err := b.Validate(); err != nil {
		return Activation{}, err
	}
	if b.row.id != 0 && b.param != b.row.defaultParam {
		if err := b.CheckDerivatives(); err != nil {
			return Activation{}, fmt.Errorf("activation %s: %w", b.Name(), err)
		}
	}
	return b, nil
}

// rowIDs numbers the user-defined rows.
var rowIDs atomic.Uint64

// newRow checks what New and NewParam share and returns a row with its
// name, title, breakpoints and check range.
func newRow(fn, name, title string, breakpoints []float64, checkRange [2]float64) (*row, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	if title == "" {
		title = name
	}
	bp := slices.Clone(breakpoints)
	for _, b := range bp {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return nil, fmt.Errorf("%s %q: breakpoint %v, want finite values", fn, name, b)
		}
	}
	slices.Sort(bp)
	if checkRange == [2]float64{} {
		checkRange = [2]float64{math.Inf(-1), math.Inf(1)}
	}
	if lo, hi := checkRange[0], checkRange[1]; !(lo <= -1 && hi >= 1) {
		return nil, fmt.Errorf("%s %q: CheckRange [%v, %v], want a range containing [-1, 1] (the bounds may be ±Inf; the zero value is the whole line)", fn, name, lo, hi)
	}
	return &row{name: name, title: fixedTitle(title), breakpoints: slices.Compact(bp), checkRange: checkRange, id: rowIDs.Add(1)}, nil
}

// checkName reports whether name can be an activation's name: the -acts
// flags split on ',' and ParseActivation on ':', the examples use names in
// file paths and summary keys (split on '.'), and ParseActivation lowers
// the case of what it is given.
func checkName(name string) error {
	ok := name != "" && len(name) <= 64 && name[0] >= 'a' && name[0] <= 'z'
	for _, c := range name {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')
	}
	if !ok {
		return fmt.Errorf("name %q: want a lower-case letter, then lower-case letters, digits or '_' (at most 64), such as \"mish\"", name)
	}
	for _, r := range table {
		if r.name == name || r.alias == name {
			return fmt.Errorf("name %q is a built-in activation's; choose another", name)
		}
	}
	return nil
}

func nilFuncs(f, d1, d2 bool) string {
	var s []string
	for i, isNil := range []bool{f, d1, d2} {
		if isNil {
			s = append(s, []string{"F", "D1", "D2"}[i])
		}
	}
	return fmt.Sprint(s)
}

// The registry of user-defined activations, in registration order.
var registry struct {
	sync.RWMutex
	rows []*row
}

// Register makes a user-defined activation (New, NewParam) known to
// ParseActivation and ParseActivations under its name, and so to every
// -acts flag of the examples. A family is registered with every value of
// its parameter: "name" gives its default, "name:p" the value p. Another
// definition under a registered name is an error (registering the same
// activation again does nothing, as gob.Register does), and so is a
// built-in activation. It is safe for concurrent use.
func Register(a Activation) error {
	if err := a.Validate(); err != nil {
		return fmt.Errorf("activation.Register: %w", err)
	}
	if a.row.id == 0 {
		return fmt.Errorf("activation.Register: %s is built in: ParseActivation knows it already", a.row.name)
	}
	registry.Lock()
	defer registry.Unlock()
	for _, r := range registry.rows {
		switch {
		case r == a.row:
			return nil
		case r.name == a.row.name:
			return fmt.Errorf("activation.Register: the name %q is registered already, by another definition; each name can be registered once", r.name)
		}
	}
	registry.rows = append(registry.rows, a.row)
	return nil
}

// Registered returns the activations added with Register, in the order
// they were registered, each at its default parameter.
func Registered() []Activation {
	rows := registeredRows()
	out := make([]Activation, len(rows))
	for i, r := range rows {
		out[i] = of(r)
	}
	return out
}

func registeredRows() []*row {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.rows)
}

// registered returns the registered row with the given name, or nil.
func registered(name string) *row {
	registry.RLock()
	defer registry.RUnlock()
	for _, r := range registry.rows {
		if r.name == name {
			return r
		}
	}
	return nil
}
