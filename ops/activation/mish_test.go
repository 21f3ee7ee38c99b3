package activation_test

// The user-defined Mish of example_own_test.go checked as the built-in
// activations are: against the 50-digit mpmath reference in
// testdata/mish.csv.gz (gen_mish.py), against PyTorch's F.mish where torch
// is installed, through the graph op's double backward, and through
// package analysis against testdata/mish_profile.csv.

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/torchtest"
)

// torchAccurate is the error, in ulp of T, up to which PyTorch's Mish is
// compared with ours (see TestMishAgainstPyTorch).
const torchAccurate = 32

// loadMish reads testdata/mish.csv.gz.
func loadMish(t *testing.T) []refRow {
	t.Helper()
	f, err := os.Open("testdata/mish.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var rows []refRow
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "x,") {
			continue
		}
		cols := strings.Split(line, ",")
		if len(cols) != 6 {
			t.Fatalf("bad fixture line %q", line)
		}
		x, err := strconv.ParseFloat(cols[0], 64)
		if err != nil {
			t.Fatalf("bad x in %q: %v", line, err)
		}
		rows = append(rows, refRow{x, [3]string{cols[1], cols[2], cols[3]}, [2]string{cols[4], cols[5]}})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 4000 {
		t.Fatalf("fixture has %d rows, want the 4449 gen_mish.py writes", len(rows))
	}
	return rows
}

func mustMish(t testing.TB, name string) activation.Activation {
	t.Helper()
	m, err := newMish(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ulpErrors checks act's f, f', f” at every row in float64 and float32
// with the bounds of TestAccuracyAgainstMPMath and returns the worst errors:
// in ulp of the result, and in ulp of the terms where they cancel.
func ulpErrors(t *testing.T, act activation.Activation, rows []refRow, bits int, report bool) (worst, worstTerm [3]float64) {
	eps := math.Pow(2, -52)
	if bits == 32 {
		eps = math.Pow(2, -23)
	}
	for k := 0; k < 3; k++ {
		got := evaluate(act, k, rows, bits)
		for i, r := range rows {
			if bits == 32 && float64(float32(r.x)) != r.x {
				continue
			}
			want := parse(t, r.vals[k], bits)
			e := ulps(got[i], want, bits)
			if e <= maxULP(bits) {
				worst[k] = math.Max(worst[k], e)
				continue
			}
			if k > 0 && !math.IsNaN(got[i]) {
				terms := math.Abs(parse(t, r.terms[k-1], 64))
				if te := math.Abs(got[i]-want) / (eps * terms); te <= maxTermULP {
					worstTerm[k] = math.Max(worstTerm[k], te)
					continue
				}
			}
			worst[k] = math.Max(worst[k], e)
			if report {
				t.Errorf("%s f^(%d) float%d at x=%v (%s): got %v, want %v (%s): %v ulp", act, k, bits, r.x, strconv.FormatFloat(r.x, 'x', -1, 64), got[i], want, r.vals[k], e)
			}
		}
	}
	return worst, worstTerm
}

func TestMishAgainstMPMath(t *testing.T) {
	rows := loadMish(t)
	var central []refRow
	for _, r := range rows {
		if math.Abs(r.x) <= 20 {
			central = append(central, r)
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\nMish: max error in ulp of the result (in ulp of the terms where they cancel)\n%-24s %6s %6s %14s %14s\n", "definition", "dtype", "f", "f'", "f''")
	for _, bits := range []int{64, 32} {
		w, wt := ulpErrors(t, mustMish(t, "mish"), rows, bits, true)
		fmt.Fprintf(&report, "%-24s %6s %6.0f %6.0f (%5.2f) %6.0f (%5.2f)\n", "ExampleNew's, all", fmt.Sprintf("f%d", bits), w[0], w[1], wt[1], w[2], wt[2])
	}
	// The README's ten lines: f” loses about 2x ulp for x > 0 to cosh's
	// amplification of the rounding of softplus(x); results at ±Inf are
	// NaN and subnormal ones inexact.
	readme := readmeMish(t)
	for _, bits := range []int{64, 32} {
		w, wt := ulpErrors(t, readme, central, bits, false)
		bound := [3]float64{maxULP(bits), maxULP(bits), 64}
		for k := range w {
			if w[k] > bound[k] {
				t.Errorf("the README's Mish: f^(%d) float%d off by %v ulp in [-20, 20], want at most %v", k, bits, w[k], bound[k])
			}
		}
		fmt.Fprintf(&report, "%-24s %6s %6.0f %6.0f (%5.2f) %6.0f (%5.2f)\n", "README's, in [-20, 20]", fmt.Sprintf("f%d", bits), w[0], w[1], wt[1], w[2], wt[2])
	}
	t.Log(report.String())
}

// readmeMish is the Mish of the README's "Train your own model" snippet
// (also in examples/gelu-vs-relu's test): short, built on Softplus's
// accurate log(1+eˣ) and σ(x).
func readmeMish(t *testing.T) activation.Activation {
	t.Helper()
	// Mish, x·tanh(softplus(x)), on Softplus's log(1+eˣ) and σ(x), accurate in both tails.
	sp, sig := activation.Softplus.F, activation.Softplus.Deriv
	mish, err := activation.New(activation.Def{Name: "mish", Title: "Mish",
		F:  func(x float64) float64 { return x * math.Tanh(sp(x)) },
		D1: func(x float64) float64 { c := 1 / math.Cosh(sp(x)); return math.Tanh(sp(x)) + x*sig(x)*c*c },
		D2: func(x float64) float64 {
			t, c, s := math.Tanh(sp(x)), 1/math.Cosh(sp(x)), sig(x)
			return s * c * c * (2 + x*(sig(-x)-2*s*t))
		},
	}) // refused if D1 or D2 disagrees with finite differences of F or D1
	if err != nil {
		t.Fatal(err)
	}
	return mish
}

// torchMish runs testdata/torch_mish.py on xs and returns PyTorch's f, f',
// f” per x, in float64 and float32.
func torchMish(t *testing.T, py string, xs []float64) (version string, f64, f32 [][3]float64) {
	t.Helper()
	var in strings.Builder
	for _, x := range xs {
		in.WriteString(strconv.FormatFloat(x, 'x', -1, 64) + "\n")
	}
	cmd := exec.Command(py, "testdata/torch_mish.py")
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("torch_mish.py: %v\n%s", err, stderr.String())
	}
	var res struct {
		Torch            string
		Float64, Float32 [][3]any
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("torch_mish.py output: %v", err)
	}
	dec := func(rows [][3]any) [][3]float64 {
		v := make([][3]float64, len(rows))
		for i, r := range rows {
			for k, e := range r {
				switch e := e.(type) {
				case float64:
					v[i][k] = e
				case string:
					f, err := strconv.ParseFloat(e, 64)
					if err != nil {
						t.Fatalf("torch_mish.py: value %q", e)
					}
					v[i][k] = f
				}
			}
		}
		return v
	}
	if len(res.Float64) != len(xs) || len(res.Float32) != len(xs) {
		t.Fatalf("torch_mish.py returned %d and %d rows for %d inputs", len(res.Float64), len(res.Float32), len(xs))
	}
	return res.Torch, dec(res.Float64), dec(res.Float32)
}

// PyTorch's F.mish and its autograd derivatives agree with the Mish
// defined here, in float64 and float32, on the fixture's inputs in
// [−20, 20]. PyTorch computes f” as autograd's derivative of its
// backward formula, which holds 1 − tanh²(softplus x) and so loses about
// e^(2x)/4 ulp for x > 0 (every digit by x = 18 in float64), and its f in
// float32 loses digits where eˣ is subnormal: the values are compared
// where PyTorch's own error, against the mpmath reference, is at most
// torchAccurate ulp of T (the terms' magnitude; the value itself for f),
// and such points must be at least half. Both errors are logged.
func TestMishAgainstPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("Mish against PyTorch skipped in -short mode (a python run, about 5 s)")
	}
	py := torchtest.Python(t, "Mish against PyTorch")
	m := mustMish(t, "mish")
	var rows []refRow
	var xs []float64
	for _, r := range loadMish(t) {
		if math.Abs(r.x) <= 20 {
			rows, xs = append(rows, r), append(xs, r.x)
		}
	}
	version, tf64, tf32 := torchMish(t, py, xs)
	for _, bits := range []int{64, 32} {
		eps, tiny, torch := 0x1p-52, 0x1p-1074, tf64
		if bits == 32 {
			eps, tiny, torch = 0x1p-23, 0x1p-149, tf32
		}
		var worstOurs, worstTorch, worstApart [3]float64
		var accurate, all [3]int
		for k := 0; k < 3; k++ {
			ours := evaluate(m, k, rows, bits)
			for i, r := range rows {
				if bits == 32 && float64(float32(r.x)) != r.x {
					continue
				}
				want := parse(t, r.vals[k], bits)
				scale := math.Abs(want)
				if k > 0 {
					scale = math.Max(scale, math.Abs(parse(t, r.terms[k-1], 64)))
				}
				scale = math.Max(eps*scale, tiny)
				o, p := math.Abs(ours[i]-want)/scale, math.Abs(torch[i][k]-want)/scale
				worstOurs[k], worstTorch[k] = math.Max(worstOurs[k], o), math.Max(worstTorch[k], p)
				all[k]++
				if !(p <= torchAccurate) {
					continue
				}
				accurate[k]++
				apart := math.Abs(ours[i]-torch[i][k]) / scale
				worstApart[k] = math.Max(worstApart[k], apart)
				if !(apart <= torchAccurate+maxTermULP) {
					t.Errorf("float%d f^(%d)(%v): ours %v, PyTorch %v: %.3g ulp of %.4g apart, want at most %v (mpmath: %s)",
						bits, k, r.x, ours[i], torch[i][k], apart, scale/eps, torchAccurate+maxTermULP, r.vals[k])
				}
			}
			if accurate[k] < all[k]/2 {
				t.Errorf("float%d f^(%d): PyTorch within %v ulp of mpmath at only %d of %d inputs", bits, k, torchAccurate, accurate[k], all[k])
			}
		}
		t.Logf("float%d, PyTorch %s, inputs in [-20, 20]: worst error in ulp of T (f, f', f''): ours %.3g, PyTorch %.3g; "+
			"where PyTorch is within %v ulp (%v of %v inputs): apart by at most %.3g",
			bits, version, worstOurs, worstTorch, torchAccurate, accurate, all, worstApart)
	}
}

// analysis.ProfileOf on the user-defined Mish against mpmath's minimum,
// inflection points and Gaussian moments (testdata/mish_profile.csv).
func TestMishProfile(t *testing.T) {
	raw, err := os.ReadFile("testdata/mish_profile.csv")
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "quantity,") {
			continue
		}
		k, v, _ := strings.Cut(line, ",")
		if ref[k], err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("mish_profile.csv: %q: %v", line, err)
		}
	}
	p, err := analysis.ProfileOf(mustMish(t, "mish"))
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want, tol float64) {
		if !(math.Abs(got-want) <= tol) {
			t.Errorf("%s = %.17g, mpmath %.17g: off by %.3g, want at most %.3g", what, got, want, math.Abs(got-want), tol)
		}
	}
	if !p.HasMin {
		t.Fatal("no minimum found")
	}
	// f' is well conditioned at its root (f'' ≈ 0.39 there): a few ulp.
	near("minimum x", p.MinX, ref["min_x"], 1e-14)
	near("minimum f", p.MinF, ref["min_f"], 1e-16)
	near("f'(0)", p.D1At0, ref["d1_at_0"], 0)
	near("f''(0)", p.D2At0, ref["d2_at_0"], 2e-16)
	if len(p.Inflections) != 2 {
		t.Fatalf("inflection points %v, want 2", p.Inflections)
	}
	near("first inflection point", p.Inflections[0], ref["inflection_0"], 1e-14)
	near("second inflection point", p.Inflections[1], ref["inflection_1"], 1e-14)
	if want := (analysis.Intervals{{Lo: p.Inflections[0], Hi: p.Inflections[1]}}); p.Convex.String() != want.String() {
		t.Errorf("convex on %v, want %v", p.Convex, want)
	}
	for _, q := range []struct {
		what string
		e    analysis.Estimate
		key  string
	}{{"E[f(X)]", p.Mean, "mean_f"}, {"E[f'(X)]", p.Deriv.Mean, "mean_d1"}, {"E[f'(X)²]", p.Deriv.MeanSq, "mean_d1sq"}, {"Var[f'(X)]", p.Deriv.Var, "var_d1"}} {
		// The quadrature's own error estimate bounds the error.
		near(q.what, q.e.Value, ref[q.key], math.Max(q.e.Err, 1e-15))
		if q.e.Err > 1e-11 {
			t.Errorf("%s: error estimate %v, want the quadrature's 1e-12 relative", q.what, q.e.Err)
		}
	}
}
