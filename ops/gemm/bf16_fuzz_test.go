package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// FuzzGemmBF16 checks GemmBF16 on fuzzed products against the float64
// reference of the bfloat16-rounded operands (bf16Reference), on every
// path this machine runs and the emulated AMX one: any shape up to
// 200×300×1100 (deeper than bf16KC; 1×N, N×1 and empty included), both
// transposes, row strides wider than the rows (NaN in the padding), the
// scalars BLAS special-cases, float32 or bfloat16 operands; the portable
// and AVX512_BF16 results must be the same bits. With alias set, C is
// placed in the memory of A (float32) or B (bfloat16, two per float32
// slot) at a fuzzed offset: GemmBF16 must refuse exactly when the spans
// overlap, and then leave everything as it was.
func FuzzGemmBF16(f *testing.F) {
	f.Add(false, false, uint16(1), uint16(37), uint16(19), uint8(0), uint8(1), uint8(0), uint16(0))
	f.Add(true, true, uint16(37), uint16(1), uint16(19), uint8(0x21), uint8(2), uint8(0x40), uint16(0))
	f.Add(false, true, uint16(131), uint16(7), uint16(1030), uint8(0x12), uint8(3), uint8(0x80), uint16(0))
	f.Add(true, false, uint16(25), uint16(65), uint16(257), uint8(0x03), uint8(4), uint8(0xc0), uint16(0))
	f.Add(false, false, uint16(3), uint16(5), uint16(4), uint8(0), uint8(1), uint8(1), uint16(10))
	f.Add(false, false, uint16(3), uint16(5), uint16(4), uint8(0), uint8(1), uint8(2), uint16(9))
	f.Fuzz(func(t *testing.T, tA, tB bool, m16, n16, k16 uint16, pads, scalars, mode uint8, offset uint16) {
		c := ownCase{tA: tA, tB: tB, m: int(m16 % 201), n: int(n16 % 301), k: int(k16 % 1101),
			padA: int(pads & 3), padB: int(pads >> 2 & 3), padC: int(pads >> 4 & 3)}
		if c.m*c.n*c.k > 2e6 { // keep the portable kernels and the reference cheap
			c.k = 2e6 / max(1, c.m*c.n)
		}
		values := []float64{0, 1, -1, 0.5, 2.25}
		c.alpha, c.beta = values[int(scalars)%5], values[int(scalars/5)%5]
		c.nanC = c.beta == 0 && scalars&0x80 != 0
		if alias := mode % 3; alias != 0 {
			bf16CheckAliased(t, c, alias == 1, int(offset))
			return
		}
		kind := bf16Kind(mode >> 6 % 3)
		prev := bf16Path()
		defer bf16Active.Store(prev)
		var results [][]float32
		for _, p := range append(append([]*bf16Kernel(nil), bf16Paths...), &bf16AMXEmulatedPath) {
			if ok, _ := p.usable(); !ok {
				continue
			}
			bf16Active.Store(p)
			bf16CheckCases(t, kind, []ownCase{c})
			if p.name == "generic" || p.name == "avx512bf16" {
				r := rand.New(rand.NewPCG(uint64(offset), 5))
				a, lda, b, ldb, cm, ldc := ownOperands[float32](c, r)
				if err := bf16Run(kind, c, a, lda, b, ldb, cm, ldc); err != nil {
					t.Fatal(err)
				}
				results = append(results, cm)
			}
		}
		if len(results) == 2 {
			for i, x := range results[0] {
				y := results[1][i]
				if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
					t.Fatalf("%v %v: C[%d] = %v on one path, %v on the other", kind, c, i, x, y)
				}
			}
		}
	})
}

// bf16CheckAliased places C in the memory of A (onA, float32) or of B
// (bfloat16, viewed as float32) at float32 offset off and checks that
// GemmBF16 refuses exactly when C's span overlaps the operand's, leaving
// everything untouched then, and computes the product otherwise.
func bf16CheckAliased(t *testing.T, c ownCase, onA bool, off int) {
	rowsA, colsA, rowsB, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
	lda, ldb, ldc := max(1, colsA+c.padA), max(1, colsB+c.padB), max(1, c.n+c.padC)
	span := func(rows, cols, ld int) int {
		if rows == 0 || cols == 0 {
			return 0
		}
		return (rows-1)*ld + cols
	}
	spanA, spanB, spanC := span(rowsA, colsA, lda), span(rowsB, colsB, ldb), span(c.m, c.n, ldc)
	// B's bfloat16 take half a float32 slot each.
	shared := make([]float32, max(spanA, (spanB+1)/2)+off+spanC+1)
	r := rand.New(rand.NewPCG(uint64(off), 3))
	for i := range shared {
		shared[i] = float32(r.NormFloat64())
	}
	a, b := make([]float32, spanA), make([]BF16, spanB)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	for i := range b {
		b[i] = ToBF16(float32(r.NormFloat64()))
	}
	operandSlots := spanA
	if onA {
		a = shared[:spanA]
	} else {
		b = unsafe.Slice((*BF16)(unsafe.Pointer(&shared[0])), 2*len(shared))[:spanB]
		for i := range b {
			b[i] = ToBF16(float32(r.NormFloat64()))
		}
		operandSlots = (spanB + 1) / 2
	}
	cm := shared[off : off+spanC]
	overlap := spanC > 0 && operandSlots > 0 && off < operandSlots
	err := CheckGemmBF16(c.tA, c.tB, c.m, c.n, c.k, a, lda, b, ldb, cm, ldc)
	if overlap != (err != nil) {
		t.Fatalf("%v, C at offset %d of %s (span %d, operand's %d slots): CheckGemmBF16 = %v, want an error: %v",
			c, off, map[bool]string{true: "A", false: "B"}[onA], spanC, operandSlots, err, overlap)
	}
	before := append([]float32(nil), shared...)
	bBefore := append([]BF16(nil), b...)
	err2 := GemmBF16(c.tA, c.tB, c.m, c.n, c.k, float32(c.alpha), a, lda, b, ldb, float32(c.beta), cm, ldc)
	if (err2 != nil) != overlap {
		t.Fatalf("%v: GemmBF16 = %v, CheckGemmBF16 = %v", c, err2, err)
	}
	if overlap {
		for i := range shared {
			if math.Float32bits(shared[i]) != math.Float32bits(before[i]) {
				t.Fatalf("%v: GemmBF16 with C overlapping its operand wrote element %d (%v, was %v)", c, i, shared[i], before[i])
			}
		}
		return
	}
	// Beside the operand in one buffer: an ordinary product, of the
	// operands as they were.
	bf32 := make([]float32, len(bBefore))
	for i, x := range bBefore {
		bf32[i] = x.Float32()
	}
	want, bound := bf16Reference(c, a, lda, bf32, ldb, before[off:off+spanC], ldc)
	for i := range c.m {
		for j := range c.n {
			if d := math.Abs(float64(cm[i*ldc+j]) - want[i*c.n+j]); !(d <= bound[i*c.n+j]) {
				t.Fatalf("%v, C beside its operand: C[%d][%d] = %v, want %v ± %.3g", c, i, j, cm[i*ldc+j], want[i*c.n+j], bound[i*c.n+j])
			}
		}
	}
}
