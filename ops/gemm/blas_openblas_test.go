package gemm

// OpenBLAS against gonum and against a naive float64 triple loop written
// here; the fallback to gonum.

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
)

// loadOpenBLAS returns OpenBLAS or skips the test when the machine has none.
func loadOpenBLAS(t testing.TB) *OpenBLAS {
	t.Helper()
	ob, err := LoadOpenBLAS("")
	if err != nil {
		t.Skipf("no OpenBLAS here: %v", err)
	}
	return ob
}

// gemmCase is one product with padded leading dimensions, so that a routine
// writing outside the m×n block of C or reading the padding is caught.
type gemmCase struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta float64
}

func (c gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,%dx%dx%d,alpha=%v,beta=%v", c.tA, c.tB, c.m, c.n, c.k, c.alpha, c.beta)
}

func gemmCases() []gemmCase {
	var cs []gemmCase
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, s := range [][3]int{{1, 1, 4096}, {17, 33, 65}, {64, 48, 96}, {131, 67, 129}, {3, 1000, 7}} {
				cs = append(cs, gemmCase{tA, tB, s[0], s[1], s[2], 1, 0})
				cs = append(cs, gemmCase{tA, tB, s[0], s[1], s[2], -0.75, 1.5})
			}
		}
	}
	return cs
}

// cPad fills the padding of C, which must come back unchanged.
const cPad = 7.5

// operands fills A, B and C for case c with leading dimensions 3 larger
// than needed; the padding of A and B holds NaN, which must never reach the
// result.
func operands[T graph.Float](c gemmCase, r *rng.RNG) (a []T, lda int, b []T, ldb int, cm []T, ldc int) {
	rowsA, colsA, rowsB, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
	lda, ldb, ldc = colsA+3, colsB+3, c.n+3
	fill := func(rows, cols, ld int, pad T) []T {
		s := make([]T, rows*ld)
		for i := range s {
			if i%ld < cols {
				s[i] = T(r.Uniform(-1, 1))
			} else {
				s[i] = pad
			}
		}
		return s
	}
	return fill(rowsA, colsA, lda, T(math.NaN())), lda, fill(rowsB, colsB, ldb, T(math.NaN())), ldb, fill(c.m, c.n, ldc, cPad), ldc
}

// naiveGEMM is the reference: a float64 triple loop, and the bound
// Σ|alpha·a·b| + |beta·c| each entry's rounding error is proportional to.
func naiveGEMM[T graph.Float](c gemmCase, a []T, lda int, b []T, ldb int, cm []T, ldc int) (want, scale []float64) {
	at := func(i, l int) float64 {
		if c.tA {
			return float64(a[l*lda+i])
		}
		return float64(a[i*lda+l])
	}
	bt := func(l, j int) float64 {
		if c.tB {
			return float64(b[j*ldb+l])
		}
		return float64(b[l*ldb+j])
	}
	want, scale = make([]float64, len(cm)), make([]float64, len(cm))
	for i := 0; i < c.m; i++ {
		for j := 0; j < c.n; j++ {
			var s, abs float64
			for l := 0; l < c.k; l++ {
				s += at(i, l) * bt(l, j)
				abs += math.Abs(at(i, l) * bt(l, j))
			}
			old := 0.0
			if c.beta != 0 {
				old = float64(cm[i*ldc+j])
			}
			want[i*ldc+j] = c.alpha*s + c.beta*old
			scale[i*ldc+j] = math.Abs(c.alpha)*abs + math.Abs(c.beta*old)
		}
	}
	return want, scale
}

func checkGEMM[T graph.Float](t *testing.T, impl BLAS, eps float64) {
	r := rng.New(7, "gemm")
	for _, c := range gemmCases() {
		a, lda, b, ldb, cm, ldc := operands[T](c, r)
		if c.beta == 0 {
			for i := range cm {
				if i%ldc < c.n {
					cm[i] = T(math.NaN()) // beta = 0 must ignore C, NaN included
				}
			}
		}
		want, scale := naiveGEMM(c, a, lda, b, ldb, cm, ldc)
		got := append([]T(nil), cm...)
		gemmWith(impl, c, a, lda, b, ldb, got, ldc)
		for i := range got {
			if i%ldc >= c.n { // padding: untouched
				if got[i] != cPad {
					t.Fatalf("%s %v: padding C[%d] changed from %v to %v", impl.Name(), c, i, cm[i], got[i])
				}
				continue
			}
			// Each product and sum rounds once: |error| ≤ (k+2)·eps·scale.
			if d := math.Abs(float64(got[i]) - want[i]); !(d <= float64(c.k+2)*eps*scale[i]) {
				t.Fatalf("%s %v: C[%d] = %v, want %v (|error| %g > bound %g)", impl.Name(), c, i, got[i], want[i], d, float64(c.k+2)*eps*scale[i])
			}
		}
	}
}

func gemmWith[T graph.Float](impl BLAS, c gemmCase, a []T, lda int, b []T, ldb int, cm []T, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if c.tA {
		ta = blas.Trans
	}
	if c.tB {
		tb = blas.Trans
	}
	switch cm := any(cm).(type) {
	case []float32:
		impl.Sgemm(ta, tb, c.m, c.n, c.k, float32(c.alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(c.beta), cm, ldc)
	case []float64:
		impl.Dgemm(ta, tb, c.m, c.n, c.k, c.alpha, any(a).([]float64), lda, any(b).([]float64), ldb, c.beta, cm, ldc)
	}
}

// testedBLAS returns gonum's BLAS, and OpenBLAS when it loads.
func testedBLAS(tb testing.TB) []BLAS {
	impls := []BLAS{gonumBLAS{}}
	if ob, err := LoadOpenBLAS(""); err == nil {
		impls = append(impls, ob)
	} else {
		tb.Logf("OpenBLAS not tested: %v", err)
	}
	return impls
}

func TestGEMMAgainstNaive(t *testing.T) {
	for _, impl := range testedBLAS(t) {
		t.Run(impl.Name()+"/float32", func(t *testing.T) { checkGEMM[float32](t, impl, 0x1p-24) })
		t.Run(impl.Name()+"/float64", func(t *testing.T) { checkGEMM[float64](t, impl, 0x1p-53) })
	}
}

// OpenBLAS and gonum agree to rounding on the same products.
func TestOpenBLASMatchesGonum(t *testing.T) {
	ob := loadOpenBLAS(t)
	r := rng.New(8, "gemm-vs-gonum")
	for _, c := range gemmCases() {
		a, lda, b, ldb, cm, ldc := operands[float32](c, r)
		_, scale := naiveGEMM(c, a, lda, b, ldb, cm, ldc)
		x, y := append([]float32(nil), cm...), append([]float32(nil), cm...)
		gemmWith(ob, c, a, lda, b, ldb, x, ldc)
		gemmWith(gonumBLAS{}, c, a, lda, b, ldb, y, ldc)
		for i := range x {
			if i%ldc < c.n && math.Abs(float64(x[i]-y[i])) > 2*float64(c.k+2)*0x1p-24*scale[i] {
				t.Fatalf("%v: C[%d]: OpenBLAS %v, gonum %v", c, i, x[i], y[i])
			}
		}
	}
}

func TestDefaultBLASChoice(t *testing.T) {
	if impl, note := defaultBLAS("gonum"); impl.Name() != "gonum (pure Go)" || note != "" {
		t.Errorf(`GELU_BLAS=gonum gives %q (%q), want gonum without a note`, impl.Name(), note)
	}
	// Without OpenBLAS: the own GEMM where it has assembly kernels, else gonum.
	want := fallback().Name()
	impl, note := defaultBLAS("/nonexistent/libopenblas.so")
	if impl.Name() != want || !strings.Contains(note, "/nonexistent/libopenblas.so") {
		t.Errorf("a missing library gives %q with note %q, want %q and a note naming the path", impl.Name(), note, want)
	}
	if impl, note := defaultBLAS("mkl"); impl.Name() != want || !strings.Contains(note, `"mkl"`) {
		t.Errorf("an unknown value gives %q (%q), want %q and a note quoting it", impl.Name(), note, want)
	}
	if impl, _ := defaultBLAS("own"); !strings.HasPrefix(impl.Name(), "own GEMM") {
		t.Errorf("GELU_BLAS=own gives %q", impl.Name())
	}
	impl, note = defaultBLAS("")
	ob, err := LoadOpenBLAS("")
	switch {
	case preferOwn(ownPathName(), CPUModel()):
		if _, ok := impl.(ownBLAS); !ok || note != "" {
			t.Errorf("default where the own AVX-512 kernels run is %q (%q), want the own GEMM", impl.Name(), note)
		}
	case err != nil:
		if impl.Name() != want {
			t.Errorf("default without OpenBLAS is %q, want %q", impl.Name(), want)
		}
	default:
		if _, ok := impl.(*OpenBLAS); !ok {
			t.Errorf("default with %s installed and no own AVX-512 kernels is %q (%s)", ob.Name(), impl.Name(), note)
		}
	}
	if err == nil {
		if impl, note := defaultBLAS("openblas"); impl.Name() != ob.Name() || note != "" {
			t.Errorf("GELU_BLAS=openblas gives %q (%q), want %q", impl.Name(), note, ob.Name())
		}
	}
}

// The rule: the own GEMM wherever its AVX-512 kernels run, whatever
// OpenBLAS's kernels, except on a CPU model listed as measured slower
// there; never on its AVX2 or portable kernels.
func TestPreferOwn(t *testing.T) {
	saved := openBLASFirstCPUs
	t.Cleanup(func() { openBLASFirstCPUs = saved })
	openBLASFirstCPUs = []string{"Example CPU 9000"}
	for _, c := range []struct {
		own, model string
		want       bool
	}{
		{"avx512", "AMD EPYC", true}, {"avx512", "", true}, {"avx512", "Intel(R) Xeon(R) Platinum 8481C", true},
		{"avx512", "Example CPU 9000", false}, {"avx512", "Example CPU 900", true},
		{"avx2", "AMD EPYC", false}, {"generic", "", false},
	} {
		if got := preferOwn(c.own, c.model); got != c.want {
			t.Errorf("preferOwn(%q, %q) = %v, want %v", c.own, c.model, got, c.want)
		}
	}
}

// The choice made at start-up, in a child process with GELU_BLAS set: the
// library is then never loaded, as on a machine without it.
func TestBLASEnvAtStartup(t *testing.T) {
	if name := os.Getenv("GELU_BLAS_CHILD"); name != "" {
		fmt.Printf("BLAS=%s\n", Name())
		return
	}
	// Without OpenBLAS: the own GEMM where it has assembly, else gonum.
	fallback, own := "BLAS=gonum (pure Go)", "BLAS=own GEMM ("
	if ownBestPath() != &ownGenericPath {
		fallback = own
	}
	for env, want := range map[string]string{
		"gonum":               "BLAS=gonum (pure Go)\n",
		"own":                 own,
		"/nonexistent/lib.so": fallback,
	} {
		cmd := selfCommand("-test.run=^TestBLASEnvAtStartup$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GELU_BLAS_CHILD=1", "GELU_BLAS="+env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child with GELU_BLAS=%s: %v\n%s", env, err, out)
		}
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("GELU_BLAS=%s: child printed %q, want prefix %q", env, out, want)
		}
		if strings.HasPrefix(env, "/") && !strings.Contains(string(out), "OpenBLAS not loaded: "+env) {
			t.Errorf("GELU_BLAS=%s: child printed %q, which does not say why OpenBLAS was not used", env, out)
		}
	}
}

// The default at start-up where the own AVX-512 kernels do not run (the
// own GEMM forced onto its AVX2 path, as on an AVX2-only CPU): OpenBLAS
// where it loads, else the own AVX2 kernels.
func TestDefaultWithoutOwnAVX512(t *testing.T) {
	if i := slices.IndexFunc(ownPaths, func(p *ownPath) bool { return p.name == "avx2" }); i < 0 || !ownPaths[i].ok() {
		t.Skip("no AVX2 path of the own GEMM here to force")
	}
	want := "BLAS=own GEMM (AVX2+FMA"
	if _, err := LoadOpenBLAS(""); err == nil {
		want = "BLAS=OpenBLAS "
	}
	cmd := selfCommand("-test.run=^TestBLASEnvAtStartup$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GELU_BLAS_CHILD=1", "GELU_BLAS=", "GELU_GEMM_KERNEL=avx2")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child with GELU_GEMM_KERNEL=avx2: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("GELU_GEMM_KERNEL=avx2, no GELU_BLAS: child printed %q, want prefix %q", out, want)
	}
}

// gorgonia's own MatMul goes through the BLAS chosen here.
func TestGorgoniaUsesChosenBLAS(t *testing.T) {
	ob := loadOpenBLAS(t)
	defer Use(currentBLAS())
	Use(ob)
	if G.WhichBLAS() != G.BLAS(ob) || tensor.WhichBLAS() != tensor.BLAS(ob) {
		t.Fatalf("gorgonia uses %T, tensor %T, want *OpenBLAS", G.WhichBLAS(), tensor.WhichBLAS())
	}
	r := rng.New(9, "gorgonia-matmul")
	const m, k, n = 40, 50, 60
	a := tensor.New(tensor.WithShape(m, k), tensor.WithBacking(randSlice(r, m*k)))
	b := tensor.New(tensor.WithShape(k, n), tensor.WithBacking(randSlice(r, k*n)))
	c, err := tensor.MatMul(a, b)
	if err != nil {
		t.Fatal(err)
	}
	av, bv, cv := a.Float64s(), b.Float64s(), c.(*tensor.Dense).Float64s()
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += av[i*k+l] * bv[l*n+j]
			}
			if math.Abs(cv[i*n+j]-s) > 1e-13 {
				t.Fatalf("C[%d,%d] = %v, want %v", i, j, cv[i*n+j], s)
			}
		}
	}
	Use(nil)
	if _, ok := G.WhichBLAS().(gonumBLAS); !ok || Name() != "gonum (pure Go)" {
		t.Errorf("Use(nil) leaves %T / %q", G.WhichBLAS(), Name())
	}
}

func randSlice(r *rng.RNG, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.Uniform(-1, 1)
	}
	return s
}

func TestOpenBLASThreads(t *testing.T) {
	ob := loadOpenBLAS(t)
	old := ob.Threads()
	defer ob.SetThreads(old)
	if err := ob.SetThreads(1); err != nil || ob.Threads() != 1 {
		t.Errorf("SetThreads(1): err %v, Threads() = %d", err, ob.Threads())
	}
	if err := ob.SetThreads(0); err == nil {
		t.Error("SetThreads(0) succeeded")
	}
	if !strings.Contains(ob.Name(), "OpenBLAS") || !strings.Contains(ob.Name(), "1 thread)") {
		t.Errorf("Name() = %q", ob.Name())
	}
}

func TestSetBLASThreads(t *testing.T) {
	ob, err := LoadOpenBLAS("")
	if err != nil {
		t.Skip("OpenBLAS not installed:", err)
	}
	prev := currentBLAS()
	defer Use(prev)
	Use(ob)
	before := ob.Threads()
	defer ob.SetThreads(before)
	if err := SetThreads(1); err != nil || ob.Threads() != 1 {
		t.Errorf("SetThreads(1): %v, threads now %d", err, ob.Threads())
	}
	Use(nil)
	if err := SetThreads(1); err == nil {
		t.Error("the pure-Go BLAS accepted a thread count")
	}
}

// selfCommand runs this test binary again. Under an emulator (the arm64
// tests run with go test -exec qemu-aarch64) the binary cannot be executed
// directly; GELU_TEST_EXEC names the emulator command to run it with.
func selfCommand(args ...string) *exec.Cmd {
	pre := strings.Fields(os.Getenv("GELU_TEST_EXEC"))
	argv := append(append(pre, os.Args[0]), args...)
	return exec.Command(argv[0], argv[1:]...)
}

// A product handed to OpenBLAS allocates nothing: a training step makes
// thousands of them (issue 14).
func TestOpenBLASCallAllocatesNothing(t *testing.T) {
	if ownRaceEnabled {
		t.Skip("the race detector makes sync.Pool drop blocks at random")
	}
	ob := loadOpenBLAS(t)
	const m, n, k = 32, 48, 64 // above smallGEMM: goes to C
	a32, b32, c32 := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	a64, b64, c64 := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
	for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		lda, ldb := k, n
		if tr == blas.Trans {
			lda, ldb = m, k
		}
		if got := testing.AllocsPerRun(50, func() {
			ob.Sgemm(tr, tr, m, n, k, 1.5, a32, lda, b32, ldb, 0.5, c32, n)
		}); got != 0 {
			t.Errorf("Sgemm(%c): %v allocations per call, want 0", tr, got)
		}
		if got := testing.AllocsPerRun(50, func() {
			ob.Dgemm(tr, tr, m, n, k, 1.5, a64, lda, b64, ldb, 0.5, c64, n)
		}); got != 0 {
			t.Errorf("Dgemm(%c): %v allocations per call, want 0", tr, got)
		}
	}
}
