package gemm

// The bf16 product's blocking, packing and threads, in the shape of the own
// GEMM (own.go): for each block of nc columns of C and each slice of bf16KC
// steps of the inner dimension, op(B) is packed into panels of nr columns
// and op(A) into panels of mr rows, rounded to bfloat16 on the way, and a
// micro-kernel sweeps the B panels past each A panel. Packing is never
// skipped here (the own GEMM reads small operands in place): the kernels
// read bfloat16 pairs, and the conversion is the copy.
//
// Packed layout ("pair rows"): a panel of w columns of a k×w matrix Y holds
// for each pair of steps p2 the w dwords
//
//	pair(Y[2p2][j], Y[2p2+1][j]) = bf16(Y[2p2][j]) | bf16(Y[2p2+1][j])<<16,
//
// zero beyond the matrix (columns past its edge, the step after an odd
// last one): what VDPBF16PS multiplies lane by lane (Y = op(B) for the B
// panels, Y = op(A)ᵀ for the A panels of the AVX512_BF16 and portable
// kernels), and AMX's layout of B. AMX's A panels are row-major instead:
// row i holds pair(op(A)[i][2p2], op(A)[i][2p2+1]) for p2 = 0, 1, ….
//
// Each element of C is summed in the same order whatever the blocking of
// rows and columns and the number of threads (products are split by rows
// or by columns, never along k), so the result does not depend on them;
// bf16KC, where the partial sums meet C, is the same on every path.

import (
	"unsafe"

	"github.com/geluproject/gelu/ops/parallel"
)

// bf16KC is the number of steps of k summed in registers before the
// partial sum is added to C, on every path: a 12×512 A panel of bfloat16
// (12 KiB) stays in L1, and a 512-step B panel of 32 columns (32 KiB)
// streams from L2.
const bf16KC = 512

// bf16Micro computes one mr×nr tile c = alpha·a·b + beta·c (c not read
// when beta == 0) from kp pair rows of a packed A panel (lda: pairs per row
// of a row-major panel) and of a packed B panel; scratch is per-goroutine
// memory of the kernel's scratch size.
type bf16Micro func(kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, alpha, beta float32, scratch []float32)

// bf16Kernel is one path of the bf16 product: its micro-kernel, the
// layouts it packs and the blocking that suits it.
type bf16Kernel struct {
	name  string // value of GELU_BF16_KERNEL that selects it
	label string // for BF16Name
	micro bf16Micro
	// mr×nr tile; mc rows of A and nc columns of B per packed block.
	mr, nr, mc, nc int
	// kAlign: pair rows per panel are padded with zeros to a multiple of
	// it (AMX tiles take 16 pairs at a time).
	kAlign int
	// aRowMajor: A panels are row-major (AMX), not pair rows.
	aRowMajor bool
	// packAsm: operands are packed by the AVX-512 routines.
	packAsm bool
	// scratch is the floats of per-goroutine scratch micro needs.
	scratch int
	// minWorkPerPart is the multiply-adds below which a part of a split
	// product is not worth a thread.
	minWorkPerPart int
	// usable says whether this machine runs the path, and if not why.
	usable func() (bool, string)
}

// bf16GenericPath is the portable Go kernel: 4×4 tiles, every VDPBF16PS
// lane computed as the instruction computes it (bf16Dot2).
var bf16GenericPath = bf16Kernel{
	name: "generic", label: "portable Go", micro: bf16MicroGo,
	mr: 4, nr: 4, mc: 128, nc: 1024, kAlign: 1,
	minWorkPerPart: 1 << 16,
	usable:         func() (bool, string) { return true, "" },
}

// bf16Src is an operand of the product: float32 or bfloat16 elements
// with row stride ld.
type bf16Src struct {
	isF32 bool
	f32   []float32
	b16   []BF16
	ld    int
}

func bf16SrcOf[T BF16Operand](x []T, ld int) bf16Src {
	switch x := any(x).(type) {
	case []float32:
		return bf16Src{isF32: true, f32: x, ld: ld}
	case []BF16:
		return bf16Src{b16: x, ld: ld}
	}
	return bf16Src{ld: ld}
}

// at is element i of the operand as a bfloat16 the kernels may read:
// float32 rounded by ToBF16, and bfloat16 subnormals made zeros of their
// sign, as the instructions treat them.
func (x *bf16Src) at(i int) uint32 {
	if x.isF32 {
		return uint32(ToBF16(x.f32[i]))
	}
	v := x.b16[i]
	if v&0x7f80 == 0 {
		v &= 0x8000
	}
	return uint32(v)
}

// bf16Span is the address range of the first n elements of x.
func bf16Span[T BF16Operand](x []T, n int) (lo, hi uintptr) {
	var zero T
	lo = uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	return lo, lo + uintptr(n)*unsafe.Sizeof(zero)
}

// bf16Args are the arguments of one product.
type bf16Args struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta float32
	a, b        bf16Src
	c           []float32
	ldc         int
	// transC: the product computed is Cᵀ = op(B)ᵀ·op(A)ᵀ, stored
	// transposed (ownTransposeWins): the same products in the same order.
	transC bool
}

// bf16Path is the path in use, chosen at the first product (so that a
// program that never multiplies in bf16 never asks Linux for AMX state).
func bf16Path() *bf16Kernel {
	if p := bf16Active.Load(); p != nil {
		return p
	}
	bf16Select.Do(bf16SelectFromEnv)
	return bf16Active.Load()
}

func bf16Gemm(tA, tB bool, m, n, k int, alpha float32, a, b bf16Src, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		ownScale(m, n, beta, c, ldc)
		return
	}
	kern := bf16Path()
	args := bf16Args{tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, b: b, c: c, ldc: ldc}
	if bf16TransposeWins(kern, m, n) {
		args = bf16Args{tA: !tB, tB: !tA, m: n, n: m, k: k, alpha: alpha, beta: beta, a: b, b: a, c: c, ldc: ldc, transC: true}
		m, n = n, m
	}
	byRows, parts := bf16Split(kern, ownThreadCount(), m, n, k)
	if parts <= 1 {
		ar := bf16Arenas.Get()
		args.run(kern, ar, 0, m, 0, n)
		bf16Arenas.Put(ar)
		return
	}
	call := bf16Calls.Get()
	call.args, call.kern, call.byRows = args, kern, byRows
	unit, total := kern.nr, n
	if byRows {
		unit, total = kern.mr, m
	}
	tiles := (total + unit - 1) / unit
	call.bounds = call.bounds[:0]
	for p := 0; p <= parts; p++ {
		call.bounds = append(call.bounds, min(total, tiles*p/parts*unit))
	}
	parallel.For(parts, 1, call)
	call.args = bf16Args{} // drop the caller's slices
	bf16Calls.Put(call)
}

// bf16TransposeWins is ownTransposeWins for the bf16 tiles.
func bf16TransposeWins(kern *bf16Kernel, m, n int) bool {
	pad := func(x, to int) int { return (x + to - 1) / to * to }
	return 5*pad(n, kern.mr)*pad(m, kern.nr) < 4*pad(m, kern.mr)*pad(n, kern.nr)
}

// bf16Split is ownSplitFor for the bf16 tiles: how many parts a product
// is split into over threads threads, by rows of C or by columns
// (whichever is longer, so the operand every part packs is the smaller).
func bf16Split(kern *bf16Kernel, threads, m, n, k int) (byRows bool, parts int) {
	if threads <= 1 {
		return false, 1
	}
	work := float64(m) * float64(n) * float64(k)
	parts = min(threads, int(work/float64(kern.minWorkPerPart)))
	byRows = (m+kern.mr-1)/kern.mr*kern.mr >= (n+kern.nr-1)/kern.nr*kern.nr
	tiles := (n + kern.nr - 1) / kern.nr
	if byRows {
		tiles = (m + kern.mr - 1) / kern.mr
	}
	return byRows, max(1, min(parts, tiles))
}

// bf16Pairs is the number of pair rows of a panel of kc steps.
func bf16Pairs(kern *bf16Kernel, kc int) int {
	p := (kc + 1) / 2
	return (p + kern.kAlign - 1) / kern.kAlign * kern.kAlign
}

// run computes rows i0:i1 and columns j0:j1 of C.
func (g *bf16Args) run(kern *bf16Kernel, ar *ownArena, i0, i1, j0, j1 int) {
	mr, nr := kern.mr, kern.nr
	mc0 := max(mr, kern.mc/mr*mr)
	nc0 := max(nr, kern.nc/nr*nr)
	kpMax := bf16Pairs(kern, min(bf16KC, g.k))
	ap, bp, tile, scratch := bf16Buffers(ar, mc0*kpMax, kpMax*nc0, mr*nr, kern.scratch)
	c, ldc := g.c, g.ldc
	for jc := j0; jc < j1; jc += nc0 {
		nc := min(nc0, j1-jc)
		for pc := 0; pc < g.k; pc += bf16KC {
			kc := min(bf16KC, g.k-pc)
			kp := bf16Pairs(kern, kc)
			beta := g.beta
			if pc > 0 {
				beta = 1
			}
			for jr := 0; jr < nc; jr += nr {
				bf16PackPairs(kern, bp[jr*kp:(jr+nr)*kp], nr, &g.b, !g.tB, jc+jr, min(nr, nc-jr), pc, kc, kp)
			}
			for ic := i0; ic < i1; ic += mc0 {
				mc := min(mc0, i1-ic)
				for ir := 0; ir < mc; ir += mr {
					panel, rows := ap[ir*kp:(ir+mr)*kp], min(mr, mc-ir)
					if kern.aRowMajor {
						bf16PackRowMajor(panel, mr, &g.a, g.tA, ic+ir, rows, pc, kc, kp)
					} else {
						bf16PackPairs(kern, panel, mr, &g.a, g.tA, ic+ir, rows, pc, kc, kp)
					}
				}
				for ir := 0; ir < mc; ir += mr {
					rows := min(mr, mc-ir)
					for jr := 0; jr < nc; jr += nr {
						cols := min(nr, nc-jr)
						ci := (ic+ir)*ldc + jc + jr
						if rows == mr && cols == nr && !g.transC {
							kern.micro(kp, &ap[ir*kp], kp, &bp[jr*kp], &c[ci], ldc, g.alpha, beta, scratch)
							continue
						}
						kern.micro(kp, &ap[ir*kp], kp, &bp[jr*kp], &tile[0], nr, g.alpha, 0, scratch)
						if g.transC {
							bf16AddTileT(c[(jc+jr)*ldc+ic+ir:], ldc, tile, nr, rows, cols, beta)
						} else {
							bf16AddTile(c[ci:], ldc, tile, nr, rows, cols, beta)
						}
					}
				}
			}
		}
	}
}

// bf16AddTile stores the rows×cols corner of an edge tile holding
// alpha·sum: c = tile + fl(beta·c), rounded as the kernels' epilogue
// rounds (c not read when beta is 0).
func bf16AddTile(c []float32, ldc int, tile []float32, nr, rows, cols int, beta float32) {
	for i := range rows {
		dst := c[i*ldc : i*ldc+cols]
		src := tile[i*nr : i*nr+cols]
		if beta == 0 {
			copy(dst, src)
			continue
		}
		for j := range dst {
			// The conversion rounds beta·c on its own: no fused multiply-add.
			dst[j] = src[j] + float32(beta*dst[j])
		}
	}
}

// bf16AddTileT is bf16AddTile for a tile of Cᵀ.
func bf16AddTileT(c []float32, ldc int, tile []float32, nr, rows, cols int, beta float32) {
	for j := range cols {
		dst := c[j*ldc : j*ldc+rows]
		for i := range dst {
			if beta == 0 {
				dst[i] = tile[i*nr+j]
			} else {
				dst[i] = tile[i*nr+j] + float32(beta*dst[i])
			}
		}
	}
}

// bf16PackPairs packs steps p0:p0+kc and columns j0:j0+cols of Y into kp
// pair rows of w dwords, dst[p2·w + j], zero past the columns and the
// steps, where Y[p][j] = x[p·ld + j] when kRows, x[j·ld + p] otherwise.
func bf16PackPairs(kern *bf16Kernel, dst []uint32, w int, x *bf16Src, kRows bool, j0, cols, p0, kc, kp int) {
	pairs := (kc + 1) / 2
	if kern.packAsm && bf16PackPairsAsm(dst, w, x, kRows, j0, cols, p0, kc) {
		clear(dst[pairs*w : kp*w])
		return
	}
	ld := x.ld
	for p2 := range kp {
		row := dst[p2*w : p2*w+w]
		if p2 >= pairs {
			clear(row)
			continue
		}
		p := p0 + 2*p2
		hasHi := 2*p2+1 < kc
		for j := range cols {
			i := (j0+j)*ld + p
			step := 1
			if kRows {
				i, step = p*ld+j0+j, ld
			}
			v := x.at(i)
			if hasHi {
				v |= x.at(i+step) << 16
			}
			row[j] = v
		}
		clear(row[cols:])
	}
}

// bf16PackRowMajor packs steps p0:p0+kc of rows i0:i0+rows of op(A) into
// the row-major panel of AMX, h rows of kp pairs (zero past the rows and
// the steps): dst[i·kp + p2] = pair(op(A)[i][2p2], op(A)[i][2p2+1]).
func bf16PackRowMajor(dst []uint32, h int, x *bf16Src, tA bool, i0, rows, p0, kc, kp int) {
	ld := x.ld
	for i := range h {
		row := dst[i*kp : i*kp+kp]
		if i >= rows {
			clear(row)
			continue
		}
		if x.isF32 && !tA {
			// Contiguous in k: a plain conversion into the row's halves.
			half := unsafe.Slice((*BF16)(unsafe.Pointer(&row[0])), 2*kp)
			bf16ToBF16s(half[:kc], x.f32[(i0+i)*ld+p0:][:kc])
			clear(half[kc:])
			continue
		}
		for p2 := range kp {
			var v uint32
			for h := range 2 {
				p := 2*p2 + h
				if p >= kc {
					break
				}
				idx := (i0+i)*ld + p0 + p
				if tA {
					idx = (p0+p)*ld + i0 + i
				}
				v |= x.at(idx) << (16 * h)
			}
			row[p2] = v
		}
	}
}

var bf16Arenas parallel.FreeList[ownArena]

// bf16Buffers carves 64-byte-aligned packing buffers out of the arena:
// nA and nB dwords, nTile and nScratch floats.
func bf16Buffers(ar *ownArena, nA, nB, nTile, nScratch int) (a, b []uint32, tile, scratch []float32) {
	const align = 64
	round := func(n int) int { return (4*n + align - 1) / align * align }
	total := round(nA) + round(nB) + round(nTile) + round(nScratch) + align
	if len(ar.mem)*8 < total {
		ar.mem = make([]float64, (total+7)/8)
	}
	base := unsafe.Pointer(&ar.mem[0])
	off := int((align - uintptr(base)%align) % align)
	carve := func(n int) unsafe.Pointer {
		p := unsafe.Add(base, off)
		off += round(n)
		return p
	}
	a = unsafe.Slice((*uint32)(carve(nA)), nA)
	b = unsafe.Slice((*uint32)(carve(nB)), nB)
	tile = unsafe.Slice((*float32)(carve(nTile)), nTile)
	scratch = unsafe.Slice((*float32)(carve(nScratch)), nScratch)
	return a, b, tile, scratch
}

// bf16Call is a product split over threads; it is pooled so that a call
// allocates nothing.
type bf16Call struct {
	args   bf16Args
	kern   *bf16Kernel
	byRows bool
	bounds []int // part p is rows (or columns) bounds[p]:bounds[p+1]
}

// Run computes parts lo:hi (a parallel.Body over the parts).
func (call *bf16Call) Run(lo, hi int) {
	ar := bf16Arenas.Get()
	for p := lo; p < hi; p++ {
		i, j := call.bounds[p], call.bounds[p+1]
		switch {
		case i >= j:
		case call.byRows:
			call.args.run(call.kern, ar, i, j, 0, call.args.n)
		default:
			call.args.run(call.kern, ar, 0, call.args.m, i, j)
		}
	}
	bf16Arenas.Put(ar)
}

var bf16Calls parallel.FreeList[bf16Call]
