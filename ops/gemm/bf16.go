package gemm

// bfloat16 matrix products with float32 accumulation, the matrix products
// of mixed-precision training (PyTorch's autocast to bfloat16 on a CPU):
// C = alpha·op(A)·op(B) + beta·C in float32, with A and B rounded to
// bfloat16 first (or given in it), every product of two bfloat16 exact in
// float32, and the sums rounded to float32 as VDPBF16PS rounds them.
//
// Three kernel paths, chosen at start-up (GELU_BF16_KERNEL forces one):
// AMX-BF16 tiles where the CPU has them and Linux grants the process its
// tile data (bf16_amx_*.go), AVX512_BF16's VDPBF16PS (bf16_amd64.go), and a
// portable Go kernel that computes every VDPBF16PS lane exactly as the
// instruction does (bf16_kernel.go), so that the AVX512_BF16 and portable
// paths give the same bits.

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// BF16 is a bfloat16 number: the upper 16 bits of a float32 (sign, the
// same 8 exponent bits, 7 fraction bits).
type BF16 uint16

// ToBF16 rounds x to the nearest bfloat16, ties to even, as VCVTNE2PS2BF16
// does: a subnormal x becomes a zero of its sign (the instruction treats
// denormal inputs as zero), a NaN stays a NaN of its sign and upper
// payload, made quiet, and a value that rounds beyond the largest bfloat16
// becomes an infinity. PyTorch's c10::BFloat16 rounds the same way but
// keeps subnormals; both agree on every float32 of magnitude at least
// 2⁻¹²⁶ ≈ 1.2e-38.
func ToBF16(x float32) BF16 {
	u := math.Float32bits(x)
	switch {
	case u&0x7f800000 == 0:
		return BF16(u >> 16 & 0x8000)
	case u&0x7fffffff > 0x7f800000:
		return BF16(u>>16 | 0x40)
	}
	return BF16((u + 0x7fff + u>>16&1) >> 16)
}

// Float32 returns x as a float32, exactly.
func (x BF16) Float32() float32 { return math.Float32frombits(uint32(x) << 16) }

// ToBF16s rounds src into dst element by element, as ToBF16 does (with
// VCVTNE2PS2BF16 where the CPU has it: the same bits). The slices must be
// equally long.
func ToBF16s(dst []BF16, src []float32) error {
	if len(dst) != len(src) {
		return fmt.Errorf("gemm.ToBF16s: len(dst) = %d, len(src) = %d, want them equal", len(dst), len(src))
	}
	bf16ToBF16s(dst, src)
	return nil
}

// FromBF16s widens src into dst (exactly). The slices must be equally
// long.
func FromBF16s(dst []float32, src []BF16) error {
	if len(dst) != len(src) {
		return fmt.Errorf("gemm.FromBF16s: len(dst) = %d, len(src) = %d, want them equal", len(dst), len(src))
	}
	bf16FromBF16s(dst, src)
	return nil
}

func bf16ToBF16sGo(dst []BF16, src []float32) {
	for i, x := range src {
		dst[i] = ToBF16(x)
	}
}

func bf16FromBF16sGo(dst []float32, src []BF16) {
	for i, x := range src {
		dst[i] = x.Float32()
	}
}

// BF16Operand is an element type GemmBF16 takes for A and B: float32,
// rounded to bfloat16 as it is packed, or BF16.
type BF16Operand interface{ float32 | BF16 }

// GemmBF16 computes C = alpha·op(A)·op(B) + beta·C for row-major
// matrices, where op(X) is X, or its transpose when tX is set; op(A) is
// m×k, op(B) is k×n and C is m×n (float32), with row strides lda, ldb and
// ldc, like Sgemm, but with A and B in bfloat16: float32 elements are
// rounded to bfloat16 (ToBF16) as they are packed. Each product of two
// bfloat16 is exact in float32; the sum over k is accumulated in float32,
// two products at a time in the order VDPBF16PS adds them (the odd step,
// then the even one, each addition rounded to nearest even, results below
// 2⁻¹²⁶ flushed to zero), restarting every bf16KC steps, whose partial
// sums are added to C. Then C = fl(alpha·sum) + fl(beta·C).
//
// The result does not depend on the number of threads, and is the same
// on the AVX512_BF16 and portable paths (BF16Name says which runs); the
// AMX path sums each pair the other way round (Intel's definition of
// TDPBF16PS) and may differ in the last bits.
//
// Arguments are checked as Sgemm's are (CheckGemmBF16); when they are
// invalid GemmBF16 returns the error without touching C. When beta is 0, C
// is not read; when alpha is 0 or k is 0, A and B are not read.
func GemmBF16[TA, TB BF16Operand](tA, tB bool, m, n, k int, alpha float32, a []TA, lda int, b []TB, ldb int, beta float32, c []float32, ldc int) error {
	if err := CheckGemmBF16(tA, tB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return err
	}
	bf16Gemm(tA, tB, m, n, k, alpha, bf16SrcOf(a, lda), bf16SrcOf(b, ldb), beta, c, ldc)
	return nil
}

// CheckGemmBF16 reports what is wrong with GemmBF16's arguments, or nil:
// the checks of CheckSgemm (sizes, strides, lengths, C apart from A and B).
func CheckGemmBF16[TA, TB BF16Operand](tA, tB bool, m, n, k int, a []TA, lda int, b []TB, ldb int, c []float32, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("gemm: m, n, k = %d, %d, %d, want all ≥ 0", m, n, k)
	}
	rowsA, colsA, rowsB, colsB := storedShapes(tA, tB, m, n, k)
	needA, err := bf16Need("a", len(a), rowsA, colsA, lda)
	if err != nil {
		return err
	}
	needB, err := bf16Need("b", len(b), rowsB, colsB, ldb)
	if err != nil {
		return err
	}
	needC, err := bf16Need("c", len(c), m, n, ldc)
	if err != nil {
		return err
	}
	if bf16Overlap(c, needC, a, needA) {
		return fmt.Errorf("gemm: c overlaps a; the product needs separate output memory")
	}
	if bf16Overlap(c, needC, b, needB) {
		return fmt.Errorf("gemm: c overlaps b; the product needs separate output memory")
	}
	return nil
}

// bf16Need is ownNeed for a slice of length n.
func bf16Need(name string, n, rows, cols, ld int) (int, error) {
	if ld < max(1, cols) {
		return 0, fmt.Errorf("gemm: ld%s = %d for a %d×%d matrix, want ≥ %d", name, ld, rows, cols, max(1, cols))
	}
	if rows == 0 || cols == 0 {
		return 0, nil
	}
	if rows-1 > (math.MaxInt-cols)/ld {
		return 0, fmt.Errorf("gemm: a %d×%d matrix with ld%s = %d does not fit in memory", rows, cols, name, ld)
	}
	need := (rows-1)*ld + cols
	if n < need {
		return 0, fmt.Errorf("gemm: len(%s) = %d, want ≥ %d for a %d×%d matrix with ld%s = %d", name, n, need, rows, cols, name, ld)
	}
	return need, nil
}

// bf16Overlap reports whether the first nc elements of c and the first nx
// of x share memory (x's elements may be narrower than c's).
func bf16Overlap[T BF16Operand](c []float32, nc int, x []T, nx int) bool {
	if nc == 0 || nx == 0 {
		return false
	}
	c0, c1 := bf16Span(c, nc)
	x0, x1 := bf16Span(x, nx)
	return c0 < x1 && x0 < c1
}

// BF16Name reports which kernels GemmBF16 runs, e.g.
// "own bf16 GEMM (AVX512_BF16, 2 threads)", and, when GELU_BF16_KERNEL
// asked for a path this machine cannot run, why not.
func BF16Name() string {
	n, s := ownThreadCount(), "s"
	if n == 1 {
		s = ""
	}
	name := fmt.Sprintf("own bf16 GEMM (%s, %d thread%s)", bf16Path().label, n, s)
	if note := bf16Note.Load(); note != nil {
		name += "; " + *note
	}
	return name
}

// BF16Kernel names the kernel path GemmBF16 runs: "amx", "avx512bf16" or
// "generic" (the portable Go kernel, tens of times slower: a program may
// prefer float32 there), the values GELU_BF16_KERNEL takes.
func BF16Kernel() string { return bf16Path().name }

// bf16KernelEnv forces a bf16 kernel path: amx, avx512bf16 or generic.
// Unset (or "auto") picks the fastest the machine runs.
const bf16KernelEnv = "GELU_BF16_KERNEL"

var (
	bf16Active atomic.Pointer[bf16Kernel] // nil until the first product (bf16Path)
	bf16Select sync.Once
	// bf16Note says why the path in use is not the one GELU_BF16_KERNEL asked for.
	bf16Note atomic.Pointer[string]
)

func bf16SelectFromEnv() {
	env := strings.ToLower(strings.TrimSpace(os.Getenv(bf16KernelEnv)))
	bf16Note.Store(nil)
	if env == "" || env == "auto" {
		bf16Active.Store(bf16BestPath())
		return
	}
	if err := bf16UseKernel(env); err != nil {
		bf16Active.Store(bf16BestPath())
		note := err.Error()
		bf16Note.Store(&note)
	}
}

// bf16BestPath is the first path of bf16Paths (fastest first) this
// machine runs.
func bf16BestPath() *bf16Kernel {
	for _, p := range bf16Paths {
		if ok, _ := p.usable(); ok {
			return p
		}
	}
	return &bf16GenericPath
}

// bf16UseKernel switches to the named path (tests use it to cover every
// path in one process).
func bf16UseKernel(name string) error {
	var names []string
	for _, p := range bf16Paths {
		names = append(names, p.name)
		if p.name != name {
			continue
		}
		if ok, why := p.usable(); !ok {
			return fmt.Errorf("gemm: %s=%s not usable here: %s", bf16KernelEnv, name, why)
		}
		bf16Active.Store(p)
		bf16Note.Store(nil)
		return nil
	}
	return fmt.Errorf("gemm: %s=%s unknown; want %s", bf16KernelEnv, name, strings.Join(names, ", "))
}
