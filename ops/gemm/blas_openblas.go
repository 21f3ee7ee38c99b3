//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package gemm

// OpenBLAS loaded at run time with purego (dlopen without cgo), so a plain
// `go build` needs neither the library nor a C compiler: when the library is
// missing, LoadOpenBLAS fails and the package stays on gonum.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// libcName is the C library that holds the environment OpenBLAS reads.
var libcName = map[string]string{"linux": "libc.so.6", "darwin": "/usr/lib/libSystem.B.dylib", "freebsd": "libc.so.7"}[runtime.GOOS]

// openBLASNames are the library names tried, in order, when no path is given.
var openBLASNames = map[string][]string{
	"linux":   {"libopenblas.so.0", "libopenblas.so"},
	"freebsd": {"libopenblas.so", "libopenblas.so.0"},
	"darwin": {"libopenblas.dylib", "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
		"/usr/local/opt/openblas/lib/libopenblas.dylib"},
}

// CBLAS enum values (cblas.h).
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// OpenBLAS is a BLAS whose GEMMs run in OpenBLAS; every other routine is
// gonum's. It implements BLAS and gorgonia.BLAS. Create it with LoadOpenBLAS.
type OpenBLAS struct {
	gonum.Implementation
	lib     string // file name it was loaded from
	version string // e.g. "OpenBLAS 0.3.21 SkylakeX"
	sgemm   func(order, tA, tB, m, n, k int32, alpha float32, a *float32, lda int32, b *float32, ldb int32, beta float32, c *float32, ldc int32)
	dgemm   func(order, tA, tB, m, n, k int32, alpha float64, a *float64, lda int32, b *float64, ldb int32, beta float64, c *float64, ldc int32)
	setNum  func(n int32)
	getNum  func() int32
}

// threadEnv are the variables OpenBLAS reads for its thread count; when one
// is set the user has chosen and LoadOpenBLAS leaves the count alone.
var threadEnv = []string{"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}

// LoadOpenBLAS loads OpenBLAS from path, or from the usual library names
// when path is empty. Unless OPENBLAS_NUM_THREADS (or GOTO_NUM_THREADS,
// OMP_NUM_THREADS) is set, it uses at most GOMAXPROCS threads.
func LoadOpenBLAS(path string) (*OpenBLAS, error) {
	names := []string{path}
	if path == "" {
		names = openBLASNames[runtime.GOOS]
	}
	// OpenBLAS's idle worker threads spin for about 2^28 cycles (a tenth of
	// a second) before sleeping. In a training step Go code (activations,
	// the optimizer) runs between matrix products, and the spinning threads
	// take its cores: a short timeout made the FFN step 7–18% faster here
	// (examples/benchmark, ffn workloads). OpenBLAS reads the variable from
	// the C environment when it is loaded; a value the user set is kept.
	if os.Getenv("OPENBLAS_THREAD_TIMEOUT") == "" {
		setCEnv("OPENBLAS_THREAD_TIMEOUT", "4")
	}
	var handle uintptr
	var errs []string
	// dlerror's message belongs to the OS thread that called dlopen; on
	// another thread it is empty.
	runtime.LockOSThread()
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			handle, path = h, name
			break
		}
		msg := err.Error()
		if !strings.Contains(msg, name) {
			msg = name + ": " + msg
		}
		errs = append(errs, msg)
	}
	runtime.UnlockOSThread()
	if handle == 0 {
		return nil, fmt.Errorf("ops: OpenBLAS not loaded: %s", strings.Join(errs, "; "))
	}
	ob := &OpenBLAS{lib: filepath.Base(path)}
	if err := ob.bind(handle); err != nil {
		return nil, fmt.Errorf("ops: %s is not a usable OpenBLAS: %w", path, err)
	}
	userSet := false
	for _, v := range threadEnv {
		if os.Getenv(v) != "" {
			userSet = true
		}
	}
	if p := runtime.GOMAXPROCS(0); !userSet && int(ob.getNum()) > p {
		ob.setNum(int32(p))
	}
	return ob, nil
}

// bind looks up the functions used, checking each symbol first because
// purego.RegisterLibFunc panics on a missing one.
func (ob *OpenBLAS) bind(h uintptr) error {
	var config, core func() string
	for _, s := range []struct {
		fn   any
		name string
	}{
		{&ob.sgemm, "cblas_sgemm"}, {&ob.dgemm, "cblas_dgemm"},
		{&ob.setNum, "openblas_set_num_threads"}, {&ob.getNum, "openblas_get_num_threads"},
		{&config, "openblas_get_config"}, {&core, "openblas_get_corename"},
	} {
		sym, err := purego.Dlsym(h, s.name)
		if err != nil {
			return fmt.Errorf("symbol %s: %w", s.name, err)
		}
		purego.RegisterFunc(s.fn, sym)
	}
	// The configuration reads "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...".
	f := strings.Fields(config())
	if len(f) < 2 || f[0] != "OpenBLAS" {
		return errors.New("openblas_get_config does not start with \"OpenBLAS <version>\"")
	}
	ob.version = f[0] + " " + f[1]
	if c := strings.TrimSpace(core()); c != "" {
		ob.version += " " + c
	}
	return nil
}

// Name returns e.g. "OpenBLAS 0.3.21 SkylakeX (libopenblas.so.0, 2 threads)".
func (ob *OpenBLAS) Name() string {
	n, s := ob.Threads(), "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("%s (%s, %d thread%s)", ob.version, ob.lib, n, s)
}

// Threads returns the number of threads OpenBLAS uses.
func (ob *OpenBLAS) Threads() int { return int(ob.getNum()) }

// SetThreads sets the number of threads OpenBLAS uses (n ≥ 1).
func (ob *OpenBLAS) SetThreads(n int) error {
	if n < 1 || n > math.MaxInt32 {
		return fmt.Errorf("ops: OpenBLAS.SetThreads(%d): want a positive thread count", n)
	}
	ob.setNum(int32(n))
	return nil
}

// smallGEMM is the m·n·k below which gonum is used: there, the ~1 µs cost of
// a purego call exceeds the whole product.
const smallGEMM = 1 << 12

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in OpenBLAS. Arguments are
// checked exactly as gonum checks them (panicking with gonum's messages)
// before any pointer reaches C.
func (ob *OpenBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !gemmToC(tA, tB, m, n, k, lda, len(a), ldb, len(b), ldc, len(c)) || alpha == 0 {
		ob.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ob.sgemm(cblasRowMajor, cblasOp(tA), cblasOp(tB), int32(m), int32(n), int32(k),
		alpha, unsafe.SliceData(a), int32(lda), unsafe.SliceData(b), int32(ldb), beta, unsafe.SliceData(c), int32(ldc))
}

// Dgemm is Sgemm for float64.
func (ob *OpenBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !gemmToC(tA, tB, m, n, k, lda, len(a), ldb, len(b), ldc, len(c)) || alpha == 0 {
		ob.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ob.dgemm(cblasRowMajor, cblasOp(tA), cblasOp(tB), int32(m), int32(n), int32(k),
		alpha, unsafe.SliceData(a), int32(lda), unsafe.SliceData(b), int32(ldb), beta, unsafe.SliceData(c), int32(ldc))
}

func cblasOp(t blas.Transpose) int32 {
	if t == blas.NoTrans {
		return cblasNoTrans
	}
	return cblasTrans // Trans and ConjTrans are the same for real matrices
}

// gemmToC checks a GEMM's arguments as gonum does, panicking with gonum's
// message on bad ones, and reports whether the product should go to C: it
// is large enough, every slice is long enough for what C will read and
// write, and every size fits in a C int. Everything else (empty or tiny
// products, sizes beyond int32) is left to gonum, which handles it exactly.
func gemmToC(tA, tB blas.Transpose, m, n, k, lda, la, ldb, lb, ldc, lc int) bool {
	aT, okA := isTrans(tA)
	bT, okB := isTrans(tB)
	switch {
	case !okA || !okB:
		panic("blas: illegal transpose")
	case m < 0:
		panic("blas: m < 0")
	case n < 0:
		panic("blas: n < 0")
	case k < 0:
		panic("blas: k < 0")
	case aT && lda < max(1, m), !aT && lda < max(1, k):
		panic("blas: bad leading dimension of A")
	case bT && ldb < max(1, k), !bT && ldb < max(1, n):
		panic("blas: bad leading dimension of B")
	case ldc < max(1, n):
		panic("blas: bad leading dimension of C")
	}
	if m == 0 || n == 0 || k == 0 {
		return false // gonum scales C by beta or returns
	}
	rowsA, colsA, rowsB, colsB := storedShapes(aT, bT, m, n, k)
	switch {
	case la < (rowsA-1)*lda+colsA:
		panic("blas: insufficient length of a")
	case lb < (rowsB-1)*ldb+colsB:
		panic("blas: insufficient length of b")
	case lc < (m-1)*ldc+n:
		panic("blas: insufficient length of c")
	}
	for _, v := range []int{m, n, k, lda, ldb, ldc} {
		if v > math.MaxInt32 {
			return false
		}
	}
	return float64(m)*float64(n)*float64(k) >= smallGEMM
}

// setCEnv sets a variable in the C library's environment (os.Setenv does
// not reach it without cgo). It does nothing if libc cannot be loaded.
func setCEnv(key, value string) {
	libc, err := purego.Dlopen(libcName, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return
	}
	sym, err := purego.Dlsym(libc, "setenv")
	if err != nil {
		return
	}
	var setenv func(key, value string, overwrite int32) int32
	purego.RegisterFunc(&setenv, sym)
	setenv(key, value, 0)
}
