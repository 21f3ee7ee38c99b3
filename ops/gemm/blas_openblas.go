//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package gemm

// OpenBLAS loaded at run time with purego (dlopen without cgo), so a plain
// `go build` needs neither the library nor a C compiler: when the library is
// missing, LoadOpenBLAS fails and the package uses its fallback (fallback
// in blas.go).

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
	"github.com/geluproject/gelu/ops/parallel"
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

// OpenBLAS is a BLAS whose GEMMs run in OpenBLAS; every other routine is
// gonum's. It implements BLAS and gorgonia.BLAS. Create it with LoadOpenBLAS.
type OpenBLAS struct {
	gonum.Implementation
	lib     string // file name it was loaded from
	version string // e.g. "OpenBLAS 0.3.21 SkylakeX"
	core    string // the kernels' target, e.g. "SkylakeX", "Haswell"
	// sgemm and dgemm are the addresses of the Fortran-interface sgemm_ and
	// dgemm_, called through purego.SyscallN (see fortranGEMM).
	sgemm, dgemm uintptr
	setNum       func(n int32)
	getNum       func() int32
	cores        coreOwner // who runs a product on which cores: blas_openblas_threads.go
}

// gemmArgs holds the arguments of one Fortran GEMM call, which takes every
// argument by pointer. The GEMMs are called with purego.SyscallN rather
// than a function bound by purego.RegisterFunc, whose reflective call
// allocates about a dozen times per call (38,000 allocations in a GPT
// training step of ~3,000 small attention products). SyscallN passes only
// integer registers, so cblas_sgemm's float alpha and beta cannot go
// through it; the Fortran interface's pointers can. The scalars and the
// argument list live in a pooled block on the heap: on the stack they
// would move if the goroutine's stack grew, and a variadic argument list
// written in the call escapes (one allocation per call). Concurrent products
// (experiments training in parallel) each take their own block.
type gemmArgs struct {
	transA, transB  byte
	m, n, k         int32
	lda, ldb, ldc   int32
	alpha32, beta32 float32
	alpha64, beta64 float64
	args            [13]uintptr
}

// gemmArgBlocks keeps the blocks; unlike a sync.Pool's, a garbage
// collection does not empty it, so a training step allocates none.
var gemmArgBlocks parallel.FreeList[gemmArgs]

// fortranGEMM calls sgemm_ or dgemm_ at fn for the row-major product
// C = alpha·op(A)·op(B) + beta·C. Fortran is column-major, where the
// row-major C is Cᵀ = op(B)ᵀ·op(A)ᵀ: the operands and sizes are swapped, as
// OpenBLAS's cblas_sgemm does for CblasRowMajor before the same call
// (the results are bit-identical). a, b and c are the addresses of the
// first elements, alpha and beta those of p's scalars of the right type.
//
// go:uintptrescapes makes the caller's uintptr(unsafe.Pointer(…))
// arguments keep their objects alive, on the heap (where they do not move),
// until this function returns.
//
//go:uintptrescapes
func fortranGEMM(fn uintptr, p *gemmArgs, alpha, beta uintptr, tA, tB blas.Transpose, m, n, k int, a uintptr, lda int, b uintptr, ldb int, c uintptr, ldc int) {
	p.transA, p.transB = fortranOp(tB), fortranOp(tA)
	p.m, p.n, p.k = int32(n), int32(m), int32(k)
	p.lda, p.ldb, p.ldc = int32(ldb), int32(lda), int32(ldc)
	p.args = [13]uintptr{
		uintptr(unsafe.Pointer(&p.transA)), uintptr(unsafe.Pointer(&p.transB)),
		uintptr(unsafe.Pointer(&p.m)), uintptr(unsafe.Pointer(&p.n)), uintptr(unsafe.Pointer(&p.k)),
		alpha, b, uintptr(unsafe.Pointer(&p.lda)),
		a, uintptr(unsafe.Pointer(&p.ldb)),
		beta, c, uintptr(unsafe.Pointer(&p.ldc)),
	}
	purego.SyscallN(fn, p.args[:]...)
	runtime.KeepAlive(p)
}

func fortranOp(t blas.Transpose) byte {
	if t == blas.NoTrans {
		return 'N'
	}
	return 'T' // Trans and ConjTrans are the same for real matrices
}

// threadEnv are the variables OpenBLAS reads for its thread count; when one
// is set the user has chosen and LoadOpenBLAS leaves the count alone.
var threadEnv = []string{"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}

// LoadOpenBLAS loads OpenBLAS from path, or from the usual library names
// when path is empty. Unless OPENBLAS_NUM_THREADS (or GOTO_NUM_THREADS,
// OMP_NUM_THREADS) is set, OpenBLAS runs on one thread and this package
// splits large products over ops/parallel's workers, so that OpenBLAS's
// threads never compete with the project's for the cores; with the count
// set, OpenBLAS runs each product on that many threads of its own, one
// product at a time (see coreOwner).
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
	ob.cores.init(ob, !userSet)
	return ob, nil
}

// bind looks up the functions used, checking each symbol first because
// purego.RegisterLibFunc panics on a missing one.
func (ob *OpenBLAS) bind(h uintptr) error {
	var err error
	if ob.sgemm, err = purego.Dlsym(h, "sgemm_"); err != nil {
		return fmt.Errorf("symbol sgemm_: %w", err)
	}
	if ob.dgemm, err = purego.Dlsym(h, "dgemm_"); err != nil {
		return fmt.Errorf("symbol dgemm_: %w", err)
	}
	var config, core func() string
	for _, s := range []struct {
		fn   any
		name string
	}{
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
	if ob.core = strings.TrimSpace(core()); ob.core != "" {
		ob.version += " " + ob.core
	}
	return nil
}

// Name returns e.g. "OpenBLAS 0.3.21 Haswell (libopenblas.so.0, 2 threads)",
// with "; its own threads (OPENBLAS_NUM_THREADS), one product at a time"
// when OpenBLAS runs products on threads of its own (see coreOwner).
func (ob *OpenBLAS) Name() string {
	n, s := ob.Threads(), "s"
	if n == 1 {
		s = ""
	}
	name := fmt.Sprintf("%s (%s, %d thread%s)", ob.version, ob.lib, n, s)
	if !ob.cores.workers {
		name += "; its own threads (OPENBLAS_NUM_THREADS), one product at a time"
	}
	return name
}

// Threads returns the number of threads a large product runs on.
func (ob *OpenBLAS) Threads() int { return ob.cores.threads() }

// SetThreads sets the number of threads a large product runs on (n ≥ 1):
// the parts this package splits it into, or OpenBLAS's own thread count
// when the environment set one.
func (ob *OpenBLAS) SetThreads(n int) error {
	if n < 1 || n > math.MaxInt32 {
		return fmt.Errorf("ops: OpenBLAS.SetThreads(%d): want a positive thread count", n)
	}
	ob.cores.setThreads(ob, n)
	return nil
}

// smallGEMM is the m·n·k below which gonum is used: there, the cost of a
// call into C (about 1 µs through purego's reflective call when this was
// measured) exceeds the whole product.
const smallGEMM = 1 << 12

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in OpenBLAS. Arguments are
// checked before any pointer reaches C: invalid ones leave C untouched
// instead of panicking (this method has no error result; Gemm and
// CheckSgemm say what is wrong, the same for every BLAS).
func (ob *OpenBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	toC, ok := gemmToC(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	switch {
	case !ok:
		return
	case !toC || alpha == 0:
		ob.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	obGemm(ob, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmC calls OpenBLAS's sgemm_ (arguments already checked).
func (ob *OpenBLAS) sgemmC(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	p := gemmArgBlocks.Get()
	p.alpha32, p.beta32 = alpha, beta
	fortranGEMM(ob.sgemm, p, uintptr(unsafe.Pointer(&p.alpha32)), uintptr(unsafe.Pointer(&p.beta32)), tA, tB, m, n, k,
		uintptr(unsafe.Pointer(unsafe.SliceData(a))), lda, uintptr(unsafe.Pointer(unsafe.SliceData(b))), ldb, uintptr(unsafe.Pointer(unsafe.SliceData(c))), ldc)
	gemmArgBlocks.Put(p)
}

// Dgemm is Sgemm for float64.
func (ob *OpenBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	toC, ok := gemmToC(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	switch {
	case !ok:
		return
	case !toC || alpha == 0:
		ob.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	obGemm(ob, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// dgemmC is sgemmC for float64.
func (ob *OpenBLAS) dgemmC(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	p := gemmArgBlocks.Get()
	p.alpha64, p.beta64 = alpha, beta
	fortranGEMM(ob.dgemm, p, uintptr(unsafe.Pointer(&p.alpha64)), uintptr(unsafe.Pointer(&p.beta64)), tA, tB, m, n, k,
		uintptr(unsafe.Pointer(unsafe.SliceData(a))), lda, uintptr(unsafe.Pointer(unsafe.SliceData(b))), ldb, uintptr(unsafe.Pointer(unsafe.SliceData(c))), ldc)
	gemmArgBlocks.Put(p)
}

// gemmToC checks a GEMM's arguments as Gemm does (ok is false on bad
// ones) and reports whether the product should go to C: it is large
// enough and every size fits in a C int. Everything else (empty or tiny
// products, sizes beyond int32) is left to gonum, which handles it exactly.
func gemmToC[T ownFloat](tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) (toC, ok bool) {
	aT, okA := isTrans(tA)
	bT, okB := isTrans(tB)
	if !okA || !okB || ownCheck(aT, bT, m, n, k, a, lda, b, ldb, c, ldc) != nil {
		return false, false
	}
	if m == 0 || n == 0 || k == 0 {
		return false, true // gonum scales C by beta or returns
	}
	for _, v := range []int{m, n, k, lda, ldb, ldc} {
		if v > math.MaxInt32 {
			return false, true
		}
	}
	return float64(m)*float64(n)*float64(k) >= smallGEMM, true
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
