package activation_test

// Accuracy of every activation's f, f' and f'' against the 60-digit mpmath
// reference in testdata/activations.csv.gz (made by gen_activations.py), in
// float64 (the scalar reference and the float64 kernels) and float32 (the
// float32 kernels).
//
// The bound is a few ulp of the result everywhere, including the far negative
// tail, the subnormal range, ±0, ±Inf, NaN and the largest finite values. The
// one exception is where f' or f'' is a difference of nearly equal terms
// (around the minimum of GELU and its inflection points): there the relative
// accuracy of any floating-point evaluation of the sum degrades, and the
// bound is a few ulp of T, the sum of the terms' magnitudes, which the
// reference script computes in 60-digit arithmetic from the closed forms.

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
)

type refRow struct {
	x     float64
	vals  [3]string // f, f', f'' as decimal strings
	terms [2]string // T1, T2: magnitudes of the terms summed in f' and f''
}

type reference struct {
	rows      map[string][]refRow
	gatedBeta float64
}

func loadReference(t *testing.T) reference {
	t.Helper()
	f, err := os.Open("testdata/activations.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	ref := reference{rows: map[string][]refRow{}}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if b, ok := strings.CutPrefix(line, "# sigmoid_gated beta = "); ok {
			if ref.gatedBeta, err = strconv.ParseFloat(b, 64); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "name,") {
			continue
		}
		cols := strings.Split(line, ",")
		if len(cols) != 7 {
			t.Fatalf("bad fixture line %q", line)
		}
		x, err := strconv.ParseFloat(cols[1], 64)
		if err != nil {
			t.Fatalf("bad x in %q: %v", line, err)
		}
		ref.rows[cols[0]] = append(ref.rows[cols[0]], refRow{x, [3]string{cols[2], cols[3], cols[4]}, [2]string{cols[5], cols[6]}})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if ref.gatedBeta == 0 || len(ref.rows) != 8 {
		t.Fatalf("fixture incomplete: beta %v, %d activations", ref.gatedBeta, len(ref.rows))
	}
	return ref
}

// activationFor maps a fixture name to the activation under test.
func (r reference) activationFor(t *testing.T, name string) activation.Activation {
	if name == "sigmoid_gated" {
		return activation.SigmoidGated(r.gatedBeta)
	}
	a, err := activation.ParseActivation(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// parse rounds a reference decimal to float64 or float32 (correctly, by strconv).
func parse(t *testing.T, s string, bits int) float64 {
	v, err := strconv.ParseFloat(s, bits)
	if err != nil && !(isRangeErr(err) && v == 0) {
		t.Fatalf("parse %q: %v", s, err)
	}
	return v
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// ulps is the number of representable values between a and b (0 for equal
// values, ±0 counted as one value); NaN matches only NaN.
func ulps(a, b float64, bits int) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		if math.IsNaN(a) && math.IsNaN(b) {
			return 0
		}
		return math.Inf(1)
	}
	if a == b {
		return 0
	}
	if bits == 32 {
		d := ord32(float32(a)) - ord32(float32(b))
		return math.Abs(float64(d))
	}
	d := ord64(a) - ord64(b)
	return math.Abs(float64(d))
}

func ord64(v float64) int64 {
	b := int64(math.Float64bits(v))
	if b < 0 {
		return -(b & math.MaxInt64)
	}
	return b
}

func ord32(v float32) int64 {
	b := int64(int32(math.Float32bits(v)))
	if b < 0 {
		return -(b & math.MaxInt32)
	}
	return b
}

// The bounds asserted below.
const (
	// maxULP64 and maxULP32 bound the error in ulp of the result.
	maxULP64 = 4
	maxULP32 = 1
	// maxTermULP bounds the error in ulp of the summed terms' magnitude T
	// where f' or f'' is a difference of nearly equal terms.
	maxTermULP = 4
)

func TestAccuracyAgainstMPMath(t *testing.T) {
	ref := loadReference(t)
	names := make([]string, 0, len(ref.rows))
	for n := range ref.rows {
		names = append(names, n)
	}
	sort.Strings(names)
	var report strings.Builder
	fmt.Fprintf(&report, "\nmax error in ulp of the result (in ulp of the terms where they cancel)\n%-14s %6s %6s %14s %14s\n", "activation", "dtype", "f", "f'", "f''")
	for _, name := range names {
		rows := ref.rows[name]
		act := ref.activationFor(t, name)
		for _, bits := range []int{64, 32} {
			var worst, worstTerm [3]float64
			eps := math.Pow(2, -52)
			if bits == 32 {
				eps = math.Pow(2, -23)
			}
			for k := 0; k < 3; k++ {
				got := evaluate(act, k, rows, bits)
				for i, r := range rows {
					if bits == 32 && float64(float32(r.x)) != r.x {
						continue // input not representable in float32
					}
					want := parse(t, r.vals[k], bits)
					e := ulps(got[i], want, bits)
					if e <= maxULP(bits) {
						worst[k] = math.Max(worst[k], e)
						continue
					}
					// Cancelling terms: T is the sum of their magnitudes (T ≥ |want|).
					if k > 0 && !math.IsNaN(got[i]) {
						terms := math.Abs(parse(t, r.terms[k-1], 64))
						if te := math.Abs(got[i]-want) / (eps * terms); te <= maxTermULP {
							worstTerm[k] = math.Max(worstTerm[k], te)
							continue
						}
					}
					worst[k] = math.Max(worst[k], e)
					t.Errorf("%s f^(%d) float%d at x=%v (%s): got %v, want %v (%s): %v ulp", name, k, bits, r.x, strconv.FormatFloat(r.x, 'x', -1, 64), got[i], want, r.vals[k], e)
				}
			}
			fmt.Fprintf(&report, "%-14s %6s %6.0f %6.0f (%5.2f) %6.0f (%5.2f)\n", name, fmt.Sprintf("f%d", bits), worst[0], worst[1], worstTerm[1], worst[2], worstTerm[2])
		}
	}
	t.Log(report.String())
}

func maxULP(bits int) float64 {
	if bits == 32 {
		return maxULP32
	}
	return maxULP64
}

// evaluate computes f^(k) at every row's x: in float64 through the scalar
// reference and the float64 kernels (which must agree exactly), in float32
// through the float32 kernels.
func evaluate(act activation.Activation, k int, rows []refRow, bits int) []float64 {
	out := make([]float64, len(rows))
	if bits == 64 {
		x := make([]float64, len(rows))
		ones := make([]float64, len(rows))
		for i, r := range rows {
			x[i], ones[i] = r.x, 1
		}
		kern := make([]float64, len(rows))
		mustKernel(act, k, kern, x, ones)
		scalar := []func(float64) float64{act.F, act.Deriv, act.Deriv2}[k]
		for i := range rows {
			out[i] = scalar(x[i])
			if math.Float64bits(out[i]) != math.Float64bits(kern[i]) && !(math.IsNaN(out[i]) && math.IsNaN(kern[i])) {
				out[i] = math.NaN() // a disagreement is reported as an error by the caller
			}
		}
		return out
	}
	x := make([]float32, len(rows))
	ones := make([]float32, len(rows))
	for i, r := range rows {
		x[i], ones[i] = float32(r.x), 1
	}
	kern := make([]float32, len(rows))
	mustKernel(act, k, kern, x, ones)
	for i := range rows {
		out[i] = float64(kern[i])
	}
	return out
}

func mustKernel[T graph.Float](act activation.Activation, k int, dst, x, ones []T) {
	var err error
	switch k {
	case 0:
		err = activation.Forward(act, dst, x)
	case 1:
		err = activation.Backward(act, dst, x, ones)
	case 2:
		err = activation.Backward2(act, dst, x, ones)
	}
	if err != nil {
		panic(err)
	}
}
