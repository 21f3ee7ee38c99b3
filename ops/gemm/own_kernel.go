package gemm

import (
	"os"
	"strings"
	"sync/atomic"
)

// ownFloat is the element type of the own GEMM.
type ownFloat interface{ ~float32 | ~float64 }

// ownMicro computes one mr×nr tile c = alpha·a·b + beta·c from a packed A
// panel (k steps of mr values) and k rows of nr values of B, ldb apart (nr
// for a packed panel); c is not read when beta == 0. c is row-major with
// row stride ldc.
type ownMicro[T ownFloat] func(k int, a, b *T, ldb int, c *T, ldc int, alpha, beta T)

// ownMicroA is ownMicro reading A in place: element (i, p) of the mr×k
// panel at a[i·rsa + p·csa].
type ownMicroA[T ownFloat] func(k int, a *T, rsa, csa int, b *T, ldb int, c *T, ldc int, alpha, beta T)

// ownKernel is a micro-kernel with the blocking that suits it: kc is the
// depth of a packed panel (an mr×kc A panel stays in L1 while B panels
// stream past it), mc the rows of a packed A block (L2) and nc the columns
// of a packed B block.
type ownKernel[T ownFloat] struct {
	micro          ownMicro[T]
	microA         ownMicroA[T] // nil: A is always packed
	trans16        bool         // float32 transposed packing by 16×16 blocks in AVX-512 (ownPackT)
	mr, nr         int
	kc, mc, nc     int
	minWorkPerPart int // multiply-adds below which a part is not worth a thread
}

// ownPath is one implementation of the micro-kernels: the float32 and
// float64 kernels of one instruction set.
type ownPath struct {
	name  string // value of GELU_GEMM_KERNEL that selects it
	label string // for Name
	s     ownKernel[float32]
	d     ownKernel[float64]
	ok    func() bool // whether this CPU runs it
}

// ownKernelEnv forces a kernel path: avx512, avx2 or generic. Unset (or
// "auto") picks the fastest the CPU supports.
const ownKernelEnv = "GELU_GEMM_KERNEL"

// ownPaths (own_amd64.go, own_generic.go) lists the paths, fastest first.

var ownGenericPath = ownPath{
	name:  "generic",
	label: "portable Go",
	s:     ownKernel[float32]{micro: ownMicroGo[float32], mr: 4, nr: 4, kc: 256, mc: 128, nc: 1024, minWorkPerPart: 1 << 17},
	d:     ownKernel[float64]{micro: ownMicroGo[float64], mr: 4, nr: 4, kc: 256, mc: 128, nc: 1024, minWorkPerPart: 1 << 17},
	ok:    func() bool { return true },
}

var (
	ownActive atomic.Pointer[ownPath]
	// ownNote says why the path in use is not the one GELU_GEMM_KERNEL asked for.
	ownNote atomic.Pointer[string]
)

func ownSelectFromEnv() {
	env := strings.ToLower(strings.TrimSpace(os.Getenv(ownKernelEnv)))
	if env == "" || env == "auto" {
		ownActive.Store(ownBestPath())
		return
	}
	if err := ownUseKernel(env); err != nil {
		ownActive.Store(ownBestPath())
		note := err.Error()
		ownNote.Store(&note)
	}
}

func ownBestPath() *ownPath {
	for _, p := range ownPaths {
		if p.ok() {
			return p
		}
	}
	return &ownGenericPath
}

// ownUseKernel switches to the named path (tests use it to cover every
// path in one process).
func ownUseKernel(name string) error {
	for _, p := range ownPaths {
		if p.name == name {
			if !p.ok() {
				return &ownKernelError{name: name, reason: "not supported by this CPU"}
			}
			ownActive.Store(p)
			ownNote.Store(nil)
			return nil
		}
	}
	return &ownKernelError{name: name, reason: "unknown; want " + ownPathNames()}
}

func ownPathNames() string {
	var names []string
	for _, p := range ownPaths {
		names = append(names, p.name)
	}
	return strings.Join(names, ", ")
}

type ownKernelError struct{ name, reason string }

func (e *ownKernelError) Error() string {
	return "gemm: " + ownKernelEnv + "=" + e.name + " " + e.reason
}

// ownKernelOf returns the active kernel for T.
func ownKernelOf[T ownFloat]() *ownKernel[T] {
	p := ownActive.Load()
	var zero T
	switch any(zero).(type) {
	case float32:
		return any(&p.s).(*ownKernel[T])
	default:
		return any(&p.d).(*ownKernel[T])
	}
}

// ownMicroGo is the portable micro-kernel, 4×4 with the tile in sixteen
// locals so the compiler keeps it in registers.
func ownMicroGo[T ownFloat](k int, a, b *T, ldb int, c *T, ldc int, alpha, beta T) {
	const mr, nr = 4, 4
	ap := ownUnsafeSlice(a, k*mr)
	bp := ownUnsafeSlice(b, max(0, (k-1)*ldb+nr))
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	for p := 0; p < k; p++ {
		av := ap[p*mr : p*mr+mr : p*mr+mr]
		bv := bp[p*ldb : p*ldb+nr : p*ldb+nr]
		a0, a1, a2, a3 := av[0], av[1], av[2], av[3]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	tile := [mr][nr]T{{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}}
	cs := ownUnsafeSlice(c, (mr-1)*ldc+nr)
	for i := range mr {
		row := cs[i*ldc : i*ldc+nr : i*ldc+nr]
		for j := range nr {
			if beta == 0 {
				row[j] = alpha * tile[i][j]
			} else {
				row[j] = alpha*tile[i][j] + beta*row[j]
			}
		}
	}
}
