package bench

import (
	"slices"
	"testing"
)

// TestBLASDecision: a workload on both BLAS is compared at each one's best
// setting, whichever side ran it; a difference within DecisionMargin is
// nobody's win; workloads without matrix products, or run on one BLAS
// only, are not compared.
func TestBLASDecision(t *testing.T) {
	ws, err := testFamilies.ParseAll([]string{"gelu/exact/float32", "ffn/8x4x16/float32", "mlp/fixed/float32", "gpt/L1-d16-h2-T8-B2/float32", "gemm/8x4x16/float32"})
	if err != nil {
		t.Fatal(err)
	}
	gelu, ffn, mlp, gpt, gemms := ws[0].Name, ws[1].Name, ws[2].Name, ws[3].Name, ws[4].Name
	tl := Tally{}
	tl.Add(Ours, gelu, "GOMAXPROCS=2", Result{Seconds: 0.002, BLAS: ownReported})
	tl.Add(Ours, ffn, "GOMAXPROCS=1", Result{Seconds: 0.010, BLAS: ownReported})
	tl.Add(Ours, ffn, "GOMAXPROCS=2", Result{Seconds: 0.006, BLAS: ownReported})
	tl.Add(Other, ffn, "GOMAXPROCS=2, BLAS 1 thread", Result{Seconds: 0.009, BLAS: openBLASReported}) // own 1.5× as fast
	tl.Add(Ours, mlp, "GOMAXPROCS=1", Result{Seconds: 0.004, BLAS: ownReported})
	tl.Add(Other, mlp, "GOMAXPROCS=1", Result{Seconds: 0.003, BLAS: openBLASReported}) // OpenBLAS 1.33× as fast
	tl.Add(Ours, gpt, "GOMAXPROCS=2", Result{Seconds: 0.100, BLAS: ownReported})
	tl.Add(Other, gpt, "GOMAXPROCS=2", Result{Seconds: 0.102, BLAS: openBLASReported}) // within the margin
	tl.Add(Ours, gemms, "GOMAXPROCS=2", Result{Seconds: 0.001, BLAS: ownReported})     // own only
	r := newReport(t)
	d, table := tl.BLASDecision(r, ws)
	if d.Compared != 3 || !slices.Equal(d.OwnFaster, []string{ffn}) || !slices.Equal(d.OpenBLASFaster, []string{mlp}) ||
		!d.OwnAVX512 || !d.DefaultIsOwn() || d.Default != "own GEMM" {
		t.Errorf("decision %+v", d)
	}
	if len(table.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(table.Rows))
	}
	sameRow(t, "ffn", table.Rows[0], []any{ffn, "ms", 6.0, "GOMAXPROCS=2", 9.0, "GOMAXPROCS=2, BLAS 1 thread", 1.5, "own GEMM"})
	sameRow(t, "mlp", table.Rows[1], []any{mlp, "ms", 4.0, "GOMAXPROCS=1", 3.0, "GOMAXPROCS=1", 0.75, "OpenBLAS"})
	if got := table.Rows[2][7]; got != "—" {
		t.Errorf("gpt within %v: faster %v, want —", DecisionMargin, got)
	}
	if v, ok := r.Float("ffn.8x4x16.float32.openblas_time_over_own"); !ok || !same(v, 1.5) {
		t.Errorf("summary ffn openblas_time_over_own = %v (%v), want 1.5", v, ok)
	}
	// OpenBLAS as the default (the own GEMM the other side): the same
	// comparison, sides swapped.
	sw := Tally{Ours: tl[Other], Other: tl[Ours]}
	d2, _ := sw.BLASDecision(newReport(t), ws)
	if d2.DefaultIsOwn() || d2.Compared != 3 || !slices.Equal(d2.OwnFaster, d.OwnFaster) || !slices.Equal(d2.OpenBLASFaster, d.OpenBLASFaster) {
		t.Errorf("sides swapped: %+v", d2)
	}
	// No OpenBLAS: nothing compared.
	if d3, rows := (Tally{Ours: tl[Ours]}).BLASDecision(newReport(t), ws); d3.Compared != 0 || len(rows.Rows) != 0 {
		t.Errorf("own GEMM only: %+v, %d rows", d3, len(rows.Rows))
	}
}
