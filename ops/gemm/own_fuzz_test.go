package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzOwnGemm checks the own GEMM on fuzzed products against the float64
// reference and gonum (ownCheckCases), on every kernel path this CPU has:
// any shape up to 200×300×600 (1×N, N×1 and empty included), both
// transposes, row strides wider than the rows, the scalars BLAS
// special-cases (alpha 0, beta 0 with C full of NaN). With alias set, C is
// placed in the memory of A or B instead, at a fuzzed offset: the product
// must then refuse exactly when the two spans overlap, and leave C as it
// was.
func FuzzOwnGemm(f *testing.F) {
	f.Add(false, false, uint16(1), uint16(37), uint16(19), uint8(0), uint8(1), uint8(0), uint16(0))
	f.Add(true, true, uint16(37), uint16(1), uint16(19), uint8(0x21), uint8(2), uint8(0), uint16(0))
	f.Add(false, true, uint16(131), uint16(7), uint16(300), uint8(0x12), uint8(3), uint8(0), uint16(0))
	f.Add(true, false, uint16(25), uint16(65), uint16(257), uint8(0x03), uint8(4), uint8(0), uint16(0))
	f.Add(false, false, uint16(3), uint16(5), uint16(4), uint8(0), uint8(1), uint8(1), uint16(10))
	f.Add(false, false, uint16(3), uint16(5), uint16(4), uint8(0), uint8(1), uint8(2), uint16(19))
	f.Fuzz(func(t *testing.T, tA, tB bool, m16, n16, k16 uint16, pads, scalars, alias uint8, offset uint16) {
		c := ownCase{tA: tA, tB: tB, m: int(m16 % 201), n: int(n16 % 301), k: int(k16 % 601),
			padA: int(pads & 3), padB: int(pads >> 2 & 3), padC: int(pads >> 4 & 3)}
		if c.m*c.n*c.k > 3e6 { // keep the naive reference cheap
			c.k = 3e6 / max(1, c.m*c.n)
		}
		values := []float64{0, 1, -1, 0.5, 2.25}
		c.alpha, c.beta = values[int(scalars)%5], values[int(scalars/5)%5]
		c.nanC = c.beta == 0 && scalars&0x80 != 0
		prev := ownActive.Load()
		defer ownActive.Store(prev)
		for _, p := range ownPaths {
			if !p.ok() {
				continue
			}
			if err := ownUseKernel(p.name); err != nil {
				t.Fatal(err)
			}
			switch alias % 3 {
			case 0:
				ownCheckCases[float32](t, []ownCase{c})
				ownCheckCases[float64](t, []ownCase{c})
			default:
				ownCheckAliased(t, c, alias%3 == 1, int(offset))
			}
		}
	})
}

// ownCheckAliased places C in the memory of A (onA) or of B at element
// offset off and checks that Dgemm refuses exactly when C's span overlaps
// the operand's, leaving everything untouched then.
func ownCheckAliased(t *testing.T, c ownCase, onA bool, off int) {
	rowsA, colsA, rowsB, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
	lda, ldb, ldc := max(1, colsA+c.padA), max(1, colsB+c.padB), max(1, c.n+c.padC)
	// span is how many elements a rows×cols matrix with stride ld covers.
	span := func(rows, cols, ld int) int {
		if rows == 0 || cols == 0 {
			return 0
		}
		return (rows-1)*ld + cols
	}
	spanA, spanB, spanC := span(rowsA, colsA, lda), span(rowsB, colsB, ldb), span(c.m, c.n, ldc)
	shared := make([]float64, max(spanA, spanB)+off+spanC+1)
	r := rand.New(rand.NewPCG(uint64(off), 3))
	for i := range shared {
		shared[i] = r.NormFloat64()
	}
	a, b := make([]float64, spanA), make([]float64, spanB)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	for i := range b {
		b[i] = r.NormFloat64()
	}
	operandSpan := spanA
	if onA {
		a = shared[:spanA]
	} else {
		b, operandSpan = shared[:spanB], spanB
	}
	cm := shared[off : off+spanC]
	overlap := spanC > 0 && operandSpan > 0 && off < operandSpan
	err := CheckDgemm(c.tA, c.tB, c.m, c.n, c.k, a, lda, b, ldb, cm, ldc)
	if overlap != (err != nil) {
		t.Fatalf("%v, C at offset %d of %s (span %d, operand's %d): CheckDgemm = %v, want an error: %v",
			c, off, map[bool]string{true: "A", false: "B"}[onA], spanC, operandSpan, err, overlap)
	}
	if !overlap { // beside the operand in one buffer: an ordinary product
		want, bound := ownReference(c, a, lda, b, ldb, cm, ldc)
		Dgemm(c.tA, c.tB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, cm, ldc)
		for i := range c.m {
			for j := range c.n {
				if d := math.Abs(cm[i*ldc+j] - want[i*c.n+j]); !(d <= bound[i*c.n+j]) {
					t.Fatalf("%v, C beside its operand: C[%d][%d] = %v, want %v ± %.3g", c, i, j, cm[i*ldc+j], want[i*c.n+j], bound[i*c.n+j])
				}
			}
		}
		return
	}
	before := append([]float64(nil), shared...)
	Dgemm(c.tA, c.tB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, cm, ldc)
	for i := range shared {
		if shared[i] != before[i] && !(math.IsNaN(shared[i]) && math.IsNaN(before[i])) {
			t.Fatalf("%v: Dgemm with C overlapping its operand wrote element %d (%v, was %v)", c, i, shared[i], before[i])
		}
	}
}
