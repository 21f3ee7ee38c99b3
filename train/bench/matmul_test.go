package bench

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/geluproject/gelu/ops/gemm"
	"gorgonia.org/tensor"
)

// TestProducts: the FFN step's six products at tokens 8, d 4, dff 16 and
// the MLP's nine distinct ones, by hand from the shapes of x (t×d), W1
// (dff×d), W2 (d×dff), h (t×dff), and of an MLP layer's x (128×in), W
// (out×in).
func TestProducts(t *testing.T) {
	ffn, err := FFNProducts("8x4x16")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ffn {
		got = append(got, p.Args())
	}
	want := []string{"8x16x4-NT", "8x4x16-NT", "8x16x4-NN", "4x16x8-TN", "8x4x16-NN", "16x4x8-TN"}
	if !slices.Equal(got, want) {
		t.Errorf("FFNProducts(8x4x16) = %q, want %q", got, want)
	}
	if _, err := FFNProducts("8x4"); err == nil {
		t.Error("FFNProducts(8x4): no error")
	}
	got = nil
	for _, p := range MLPProducts() {
		if !slices.Contains(got, p.Args()) {
			got = append(got, p.Args())
		}
	}
	want = []string{"128x128x784-NT", "128x784x128-NN", "128x784x128-TN", "128x128x128-NT", "128x128x128-NN", "128x128x128-TN",
		"128x10x128-NT", "128x128x10-NN", "10x128x128-TN"}
	if !slices.Equal(got, want) {
		t.Errorf("MLPProducts, each once = %q, want %q", got, want)
	}
	if n := len(MLPProducts()); n != 27 {
		t.Errorf("MLPProducts: %d, want 3 per layer of 9", n)
	}
}

// TestMatMul checks a matmul step's product against a float64 triple loop
// for each transpose case, and its work: 2·m·n·k flops.
func TestMatMul(t *testing.T) {
	if w, err := MatMulWork("100x100x50-NN"); err != nil || w != 1e-3 {
		t.Errorf("MatMulWork(100x100x50-NN) = %v (%v), want 2·100·100·50 flops = 0.001 GFLOP", w, err)
	}
	for _, bad := range []string{"8x4x16", "8x4x16-NX", "8x4x16-N", "0x4x16-NN", "8x4-NN"} {
		if _, _, err := MatMul(bad, tensor.Float32); err == nil {
			t.Errorf("MatMul(%q): no error", bad)
		}
	}
	for _, args := range []string{"5x3x4-NN", "5x3x4-NT", "5x3x4-TN", "5x3x4-TT"} {
		p, err := parseProduct(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, steps, err := MatMul(args, tensor.Float32); err != nil || steps != 1 {
			t.Fatalf("MatMul(%s, float32): %v, %d steps", args, err, steps)
		}
		run, a, b, c := matMulStep[float64](p)
		if err := run(); err != nil {
			t.Fatal(err)
		}
		for i := range p.M {
			for j := range p.N {
				want := 0.0
				for l := range p.K {
					ai, bi := i*p.K+l, l*p.N+j // A m×k, B k×n as stored
					if p.TA {
						ai = l*p.M + i // A stored k×m
					}
					if p.TB {
						bi = j*p.K + l // B stored n×k
					}
					want += a[ai] * b[bi]
				}
				if got := c[i*p.N+j]; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%s: C[%d,%d] = %v, want %v", args, i, j, got, want)
				}
			}
		}
	}
}

// TestPeak: a peak step runs PeakFlops in whole iterations of every loop,
// or says the peak is unknown.
func TestPeak(t *testing.T) {
	if _, _, err := Peak("x", tensor.Float32); err == nil {
		t.Error("Peak(x): no error")
	}
	if w, _ := PeakWork("fma"); w != 0.201326592 {
		t.Errorf("PeakWork = %v GFLOP, want 1536·2¹⁷ = 201326592 flops", w)
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		run, steps, err := Peak("fma", dt)
		if errors.Is(err, gemm.ErrPeakUnknown) {
			t.Skip("peak unknown here")
		}
		if err != nil || steps != 1 || run() != nil {
			t.Fatalf("Peak(fma, %v): %v", dt, err)
		}
		if g, _ := gemm.PeakGrain(dt); PeakFlops%g != 0 {
			t.Errorf("PeakFlops %d is not whole iterations of %d flops", PeakFlops, g)
		}
	}
}

// gemmTally: a float64 product of 2·100·100·50 = 10⁶ flops on the own GEMM
// (the default, Ours) at 10 µs on 1 thread (100 GFLOP/s) and 20 µs on 2,
// on OpenBLAS (Other) at 16 µs on 1 thread and 8 µs on 2 (125 GFLOP/s);
// the float64 peak 200 GFLOP/s on 1 thread, 250 on 2 (PeakFlops in
// 0.201326592/200 s and /250 s); the float32 product at 5 µs on the own
// GEMM only (200 GFLOP/s), with no float32 peak measured.
func gemmTally(t *testing.T, ownSide, openBLASSide string) (Tally, []Workload) {
	ws, err := testFamilies.ParseAll([]string{"peak/fma/float64", "matmul/100x100x50-NN/float64", "matmul/100x100x50-NN/float32", "ffn/8x4x16/float32"})
	if err != nil {
		t.Fatal(err)
	}
	tl := Tally{}
	own := Result{BLAS: ownReported}
	ob := Result{BLAS: openBLASReported}
	def := map[bool]Result{true: own, false: ob}[ownSide == Ours] // what every child of Ours reports
	add := func(side, w, s string, r Result, sec float64) { r.Seconds = sec; tl.Add(side, w, s, r) }
	add(Ours, ws[0].Name, "GOMAXPROCS=1", def, 0.201326592/200)
	add(Ours, ws[0].Name, "GOMAXPROCS=2", def, 0.201326592/250)
	add(ownSide, ws[1].Name, "GOMAXPROCS=1", own, 1e-5)
	add(ownSide, ws[1].Name, "GOMAXPROCS=2", own, 2e-5)
	add(openBLASSide, ws[1].Name, "GOMAXPROCS=1, BLAS 1 thread", ob, 1.6e-5)
	add(openBLASSide, ws[1].Name, "GOMAXPROCS=2, BLAS 2 threads", ob, 8e-6)
	add(ownSide, ws[2].Name, "GOMAXPROCS=1", own, 5e-6)
	add(Ours, ws[3].Name, "GOMAXPROCS=1", def, 0.01)
	return tl, ws
}

func TestGEMMTable(t *testing.T) {
	for _, sides := range [][2]string{{Ours, Other}, {Other, Ours}} { // the default is the own GEMM, then OpenBLAS
		tl, ws := gemmTally(t, sides[0], sides[1])
		r := newReport(t)
		d := tl.GEMMTable(r, ws, func(w Workload) string { return "in " + w.Dtype.String() })
		if len(d.Rows) != 2 || len(d.Header) != 10 {
			t.Fatalf("own GEMM on %q: GEMMTable %d rows, header %q; want 2 rows, 10 columns", sides[0], len(d.Rows), d.Header)
		}
		// own 100 GFLOP/s at 1 thread = 50 % of 200; OpenBLAS 125 at 2
		// threads = 50 % of 250; own ÷ OpenBLAS = 100/125.
		sameRow(t, "float64", d.Rows[0], []any{"100x100x50-NN", "float64", "in float64", 100.0, "GOMAXPROCS=1", 50.0,
			125.0, "GOMAXPROCS=2, BLAS 2 threads", 50.0, 0.8})
		sameRow(t, "float32", d.Rows[1], []any{"100x100x50-NN", "float32", "in float32", 200.0, "GOMAXPROCS=1", "unknown", "—", "—", "—", "—"})
		key := "matmul.100x100x50-NN.float64."
		wantKey(t, r, key+"own_gflops", 100)
		wantKey(t, r, key+"own_pct_peak", 50)
		wantKey(t, r, key+"openblas_gflops", 125)
		wantKey(t, r, key+"openblas_pct_peak", 50)
		wantKey(t, r, key+"own_over_openblas", 0.8)
		if _, ok := r.Float("matmul.100x100x50-NN.float32.own_pct_peak"); ok {
			t.Error("a % of peak without a peak")
		}
		p := tl.PeakTable(r, ws, []int{1, 2})
		if len(p.Rows) != 1 || len(p.Header) != 3 || p.Header[2] != "peak GFLOP/s, 2 threads" {
			t.Fatalf("PeakTable: %d rows, header %q", len(p.Rows), p.Header)
		}
		sameRow(t, "peak", p.Rows[0], []any{"float64", 200.0, 250.0})
		wantKey(t, r, "peak.fma.float64.gflops_threads_2", 250)
		// The matmul and peak workloads have no row in the Overview.
		if o := tl.Overview(newReport(t), ws, "PyTorch"); len(o.Rows) != 1 || o.Rows[0][0] != "ffn/8x4x16/float32" {
			t.Errorf("Overview rows %v, want only the ffn workload's", o.Rows)
		}
	}
}

// The own GEMM's share of the peak is taken at the threads a product ran
// on: 8×8×8 (512 multiply-adds) stays on one thread whatever the setting
// on every kernel path, so 100 GFLOP/s at GOMAXPROCS=2 is 50% of the
// 1-thread peak (200), not 40% of the 2-thread one (250); 1024×1024×256
// (2²⁸ multiply-adds, at least 2⁵ times every path's split threshold) is
// split over both threads, so 125 GFLOP/s at GOMAXPROCS=2 is 50% of 250.
// OpenBLAS's split is not known: its setting's threads count.
func TestGEMMTablePeakOfTheThreadsUsed(t *testing.T) {
	ws, err := testFamilies.ParseAll([]string{"peak/fma/float64", "matmul/8x8x8-NN/float64", "matmul/1024x1024x256-NN/float64"})
	if err != nil {
		t.Fatal(err)
	}
	tl := Tally{}
	own, ob := Result{BLAS: ownReported}, Result{BLAS: openBLASReported}
	add := func(side, w, s string, r Result, sec float64) { r.Seconds = sec; tl.Add(side, w, s, r) }
	add(Ours, ws[0].Name, "GOMAXPROCS=1", own, 0.201326592/200)
	add(Ours, ws[0].Name, "GOMAXPROCS=2", own, 0.201326592/250)
	add(Ours, ws[1].Name, "GOMAXPROCS=2", own, 1024/100e9)
	add(Other, ws[1].Name, "GOMAXPROCS=2, BLAS 2 threads", ob, 1024/125e9)
	add(Ours, ws[2].Name, "GOMAXPROCS=2", own, 536870912/125e9)
	r := newReport(t)
	d := tl.GEMMTable(r, ws, func(Workload) string { return "" })
	if len(d.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(d.Rows))
	}
	near := func(what string, got any, want float64) {
		if g, ok := got.(float64); !ok || math.Abs(g-want) > 1e-9*want {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	near("8x8x8 own % of peak", d.Rows[0][5], 50)
	near("8x8x8 OpenBLAS % of peak", d.Rows[0][8], 50)
	near("1024x1024x256 own % of peak", d.Rows[1][5], 50)
}
