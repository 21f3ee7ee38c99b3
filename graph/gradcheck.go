package graph

// A gradient checker in the spirit of torch.autograd.gradcheck and
// gradgradcheck: analytic derivatives from Grad against central finite
// differences, in float64.

import (
	"errors"
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph/rng"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BuildFunc builds the function under test on g from its input nodes and
// returns its output node (any shape). Parameters it creates with g.Param
// (e.g. by building an nn layer) are checked too.
type BuildFunc func(g *Graph, inputs []*G.Node) (*G.Node, error)

// GradCheck holds the checker's settings. The zero value uses the defaults.
type GradCheck struct {
	// Step is the central-difference step h (default 1e-6).
	Step float64
	// RTol and ATol: an element passes if |analytic − numeric| ≤ ATol + RTol·|numeric|
	// (defaults 1e-6 and 1e-9).
	RTol, ATol float64
	// Seed draws the random projection u (output → scalar Σ u·y) and, for
	// CheckGradGrad, the direction v.
	Seed uint64
}

// ErrGradCheck is wrapped by the error CheckGrad and CheckGradGrad return
// when an analytic derivative disagrees with the finite differences
// (errors.Is(err, graph.ErrGradCheck)), as torch.autograd.gradcheck raises.
var ErrGradCheck = errors.New("gradient check failed")

// GradCheckResult reports the worst element found.
type GradCheckResult struct {
	OK bool
	// WorstRelErr is |analytic − numeric| / max(|numeric|, ATol/RTol) at the
	// worst element, i.e. the relative error with tiny values judged
	// absolutely; the check passes when it is at most RTol.
	WorstRelErr float64
	// Input, Name and Index locate the worst element: the input number (the
	// parameters follow the inputs, in creation order), the node's name and
	// the flat index.
	Input, Index      int
	Name              string
	Analytic, Numeric float64
	// Checked is the number of elements compared.
	Checked int
}

func (r GradCheckResult) String() string {
	verdict := "ok"
	if !r.OK {
		verdict = "FAILED"
	}
	return fmt.Sprintf("%s: worst relative error %.3g at %q element %d (analytic %.12g, numeric %.12g), %d elements checked",
		verdict, r.WorstRelErr, r.Name, r.Index, r.Analytic, r.Numeric, r.Checked)
}

func (c GradCheck) defaults() GradCheck {
	if c.Step == 0 {
		c.Step = 1e-6
	}
	if c.RTol == 0 {
		c.RTol = 1e-6
	}
	if c.ATol == 0 {
		c.ATol = 1e-9
	}
	return c
}

// CheckGrad compares the gradient of L(x) = Σ u ⊙ f(x) (u a fixed random
// tensor; L = f(x) when f is a scalar) computed by Grad with central
// differences (L(x+h·eᵢ) − L(x−h·eᵢ))/2h, for every element of every input
// and of every parameter the build function created. When an element
// fails, the error wraps ErrGradCheck and names the worst one, and the
// result is filled in as when all pass. Inputs must be
// float64; they are not modified. Every evaluation runs at the graph's
// step as the build function leaves it (0 unless it calls SetStep), so
// stochastic ops such as dropout keep one mask throughout.
func CheckGrad(f BuildFunc, inputs []*tensor.Dense, c GradCheck) (GradCheckResult, error) {
	return check(f, inputs, c.defaults(), false)
}

// CheckGradGrad checks double backward: the gradient of
// s(x) = Σ v ⊙ ∇L(x) (v a fixed random direction), which is the
// Hessian-vector product H·v, against central differences of s, where ∇L is
// the analytic gradient (check it first with CheckGrad). An input or
// parameter the gradient does not depend on (the bias of the last layer,
// which enters the output linearly) has a second derivative of 0, checked
// against the finite differences like any other, as PyTorch's
// gradgradcheck does. A failure is an error wrapping ErrGradCheck, as for
// CheckGrad.
func CheckGradGrad(f BuildFunc, inputs []*tensor.Dense, c GradCheck) (GradCheckResult, error) {
	return check(f, inputs, c.defaults(), true)
}

func check(f BuildFunc, inputs []*tensor.Dense, c GradCheck, second bool) (GradCheckResult, error) {
	res, err := compare(f, inputs, c, second)
	if err == nil && !res.OK {
		who := "graph.CheckGrad"
		if second {
			who = "graph.CheckGradGrad"
		}
		err = fmt.Errorf("%s: %w: %q element %d: analytic %.12g, numeric %.12g (relative error %.3g > rtol %g; %d elements checked)",
			who, ErrGradCheck, res.Name, res.Index, res.Analytic, res.Numeric, res.WorstRelErr, c.RTol, res.Checked)
	}
	return res, err
}

// compare computes the analytic and numeric derivatives and the result.
func compare(f BuildFunc, inputs []*tensor.Dense, c GradCheck, second bool) (GradCheckResult, error) {
	if f == nil {
		return GradCheckResult{}, fmt.Errorf("graph.CheckGrad: nil build function")
	}
	if !(c.Step > 0) || math.IsInf(c.Step, 0) || !(c.RTol > 0) || math.IsInf(c.RTol, 0) || !(c.ATol > 0) || math.IsInf(c.ATol, 0) {
		return GradCheckResult{}, fmt.Errorf("graph.CheckGrad: step %v, rtol %v, atol %v; want each finite and > 0 (or 0 for the default)",
			c.Step, c.RTol, c.ATol)
	}
	g, err := New(tensor.Float64, c.Seed)
	if err != nil {
		return GradCheckResult{}, err
	}
	r := rng.New(c.Seed, "gradcheck")
	xs := make([]*G.Node, len(inputs))
	vals := make([]*tensor.Dense, len(inputs))
	for i, in := range inputs {
		if in == nil || in.Dtype() != tensor.Float64 {
			return GradCheckResult{}, fmt.Errorf("graph.CheckGrad: input %d must be a float64 tensor", i)
		}
		if xs[i], err = g.Input(fmt.Sprintf("input%d", i), in.Shape()...); err != nil {
			return GradCheckResult{}, err
		}
		// A contiguous copy in logical order, even of a view: the machine
		// binds it without copying, so perturbing it in place reaches the
		// next run.
		vals[i] = tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(in.Shape()...))
		if err := tensor.Copy(vals[i], in); err != nil {
			return GradCheckResult{}, fmt.Errorf("graph.CheckGrad: copying input %d: %w", i, err)
		}
	}
	out, err := build(f, g, xs)
	if err != nil {
		return GradCheckResult{}, fmt.Errorf("graph.CheckGrad: building the function: %w", err)
	}
	if out == nil {
		return GradCheckResult{}, fmt.Errorf("graph.CheckGrad: the function returned a nil node")
	}
	scalar, err := g.project(out, r, "u")
	if err != nil {
		return GradCheckResult{}, err
	}
	// Parameters are checked like inputs: perturbed in place, then restored.
	for _, p := range g.params {
		xs = append(xs, p)
		vals = append(vals, p.Value().(*tensor.Dense))
	}
	grads, err := g.Grad(scalar, xs...)
	if err != nil {
		return GradCheckResult{}, err
	}
	target, analytic := scalar, grads
	if second {
		var terms []*G.Node
		for i, gr := range grads {
			t, err := g.project(gr, r, fmt.Sprintf("v%d", i))
			if err != nil {
				return GradCheckResult{}, err
			}
			terms = append(terms, t)
		}
		if target, err = g.addAll(terms); err != nil {
			return GradCheckResult{}, err
		}
		// A gradient that depends on no input or parameter (the output
		// bias's, Σ u) has a zero second derivative: its analytic value is
		// 0, compared with the finite differences like any other.
		if analytic, err = g.grad(target, xs, true); err != nil {
			return GradCheckResult{}, err
		}
	}
	var keep []*G.Node
	for _, a := range analytic {
		if a != nil {
			keep = append(keep, a)
		}
	}
	m, err := g.Compile(target, WithRespectTo(), Keep(keep...), AllowNonFinite())
	if err != nil {
		return GradCheckResult{}, err
	}
	defer m.Close()
	for i := range inputs {
		if err := m.Set(xs[i], vals[i]); err != nil {
			return GradCheckResult{}, err
		}
	}
	// Every evaluation draws the randomness of one step (the one the build
	// function left), or each would see other dropout masks.
	step := g.Step()
	run := func() error {
		g.SetStep(step)
		return m.Run()
	}
	if err := run(); err != nil {
		return GradCheckResult{}, err
	}
	want := make([][]float64, len(xs))
	for i, a := range analytic {
		if a == nil {
			want[i] = make([]float64, len(vals[i].Float64s()))
			continue
		}
		v, err := m.Value(a)
		if err != nil {
			return GradCheckResult{}, err
		}
		d, ok := v.(*tensor.Dense)
		if !ok {
			return GradCheckResult{}, fmt.Errorf("graph.CheckGrad: gradient %d is a %T", i, v)
		}
		want[i] = append([]float64(nil), d.Float64s()...)
	}
	res := GradCheckResult{OK: true}
	eval := func() (float64, error) {
		if err := run(); err != nil {
			return 0, err
		}
		v, err := m.Value(target)
		if err != nil {
			return 0, err
		}
		return scalarOf(target, v)
	}
	for i := range xs {
		data := vals[i].Float64s()
		for j := range data {
			x0 := data[j]
			data[j] = x0 + c.Step
			up, err := eval()
			if err != nil {
				return res, err
			}
			data[j] = x0 - c.Step
			down, err := eval()
			if err != nil {
				return res, err
			}
			data[j] = x0
			numeric := (up - down) / (2 * c.Step)
			a := want[i][j]
			rel := math.Abs(a-numeric) / math.Max(math.Abs(numeric), c.ATol/c.RTol)
			if math.IsNaN(rel) {
				rel = math.Inf(1)
			}
			if res.Checked == 0 || rel > res.WorstRelErr {
				res.WorstRelErr, res.Input, res.Index, res.Analytic, res.Numeric = rel, i, j, a, numeric
				res.Name = xs[i].Name()
			}
			if !(math.Abs(a-numeric) <= c.ATol+c.RTol*math.Abs(numeric)) {
				res.OK = false
			}
			res.Checked++
		}
	}
	return res, nil
}

// build calls f, turning a panic into an error.
func build(f BuildFunc, g *Graph, xs []*G.Node) (out *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return f(g, xs)
}

// project returns Σ u ⊙ n for a fixed random u (n itself when it is a scalar).
func (g *Graph) project(n *G.Node, r *rng.RNG, name string) (p *G.Node, err error) {
	defer func() {
		if e := recover(); e != nil {
			p, err = nil, fmt.Errorf("graph.CheckGrad: projecting %q: %v", n.Name(), e)
		}
	}()
	if n.IsScalar() {
		return n, nil
	}
	if n.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("graph.CheckGrad: %q has dtype %v, want float64", n.Name(), n.Dtype())
	}
	u := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(n.Shape()...))
	for i := range u.Float64s() {
		u.Float64s()[i] = r.Normal()
	}
	un := G.NewTensor(g.eg, tensor.Float64, n.Dims(), G.WithShape(n.Shape()...), G.WithName(fmt.Sprintf("gradcheck.%s.%d", name, n.ID())), G.WithValue(u))
	prod, err := G.HadamardProd(n, un)
	if err != nil {
		return nil, err
	}
	return G.Sum(prod)
}
