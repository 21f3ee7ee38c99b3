package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

// The BLAS names children report: the default (own GEMM) and the other.
const (
	ownReported      = "own GEMM (AVX-512, 2 threads)"
	openBLASReported = "OpenBLAS 0.3.21 Haswell (libopenblas.so.0, 1 thread)"
	ownColumn        = "this project (own GEMM)"
	openBLASColumn   = "this project with OpenBLAS 0.3.21 Haswell (GELU_BLAS=openblas)"
)

// tablesTally: gelu exact float32 at 2 ms ours (best of two settings), 4
// ms PyTorch; the copy of the same bytes at 1 ms ours, 0.5 ms PyTorch; an
// ffn step at 10 ms ours (the default, own GEMM), 8 ms on the other BLAS
// (OpenBLAS), never run by PyTorch.
func tablesTally(t *testing.T) (Tally, []Workload) {
	ws, err := testFamilies.ParseAll([]string{"gelu/exact/float32", "copy/gelu-traffic/float32", "ffn/8x4x16/float32"})
	if err != nil {
		t.Fatal(err)
	}
	tl := Tally{}
	tl.Add(Ours, ws[0].Name, "GOMAXPROCS=1", Result{Seconds: 0.003})
	tl.Add(Ours, ws[0].Name, "GOMAXPROCS=2", Result{Seconds: 0.002, PeakMB: 90, Allocs: 7, AllocBytes: 100, BLAS: ownReported})
	tl.Add(Peer, ws[0].Name, "1 thread", Result{Seconds: 0.004})
	tl.Add(Peer, ws[0].Name, "as installed (1 thread, BLAS 2 threads)", Result{Seconds: 0.005})
	tl.Add(Ours, ws[1].Name, "GOMAXPROCS=2", Result{Seconds: 0.001})
	tl.Add(Peer, ws[1].Name, "2 threads", Result{Seconds: 0.0005})
	tl.Add(Ours, ws[2].Name, "GOMAXPROCS=1", Result{Seconds: 0.010, BLAS: ownReported})
	tl.Add(Other, ws[2].Name, "GOMAXPROCS=2, BLAS 1 thread", Result{Seconds: 0.008, BLAS: openBLASReported})
	return tl, ws
}

func newReport(t *testing.T) *report.Report {
	r, err := report.New(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// same reports whether a cell is want: equal, or for numbers within 1e-12
// relative (the derivations here are decimal, the division binary).
func same(cell, want any) bool {
	g, ok1 := cell.(float64)
	w, ok2 := want.(float64)
	if !ok1 || !ok2 {
		return cell == want
	}
	return math.Abs(g-w) <= 1e-12*math.Abs(w)
}

func sameRow(t *testing.T, what string, row, want []any) {
	t.Helper()
	for i, v := range want {
		if !same(row[i], v) {
			t.Errorf("%s column %d = %v, want %v", what, i, row[i], v)
		}
	}
}

func wantKey(t *testing.T, r *report.Report, key string, want float64) {
	t.Helper()
	if got, ok := r.Float(key); !ok || !same(got, want) {
		t.Errorf("summary %s = %v (%v), want %v", key, got, ok, want)
	}
}

func TestOverview(t *testing.T) {
	tl, ws := tablesTally(t)
	dir := t.TempDir()
	r, err := report.New(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	d := tl.Overview(r, ws, "PyTorch 1.13")
	if len(d.Header) != 11 || d.Header[2] != ownColumn || d.Header[4] != openBLASColumn || d.Header[6] != "PyTorch 1.13" || len(d.Rows) != 3 {
		t.Fatalf("Overview: header %q, %d rows", d.Header, len(d.Rows))
	}
	// gelu: 4.194304 Melem in 2 ms = 2097.152 Melem/s; PyTorch at 4 ms
	// half that; speedup = 4 ms / 2 ms.
	sameRow(t, "gelu", d.Rows[0], []any{"gelu/exact/float32", "Melem/s", 2097.152, "GOMAXPROCS=2", "—", "—", 1048.576, "1 thread", 2.0, 90.0, 7.0})
	wantKey(t, r, "gelu.exact.float32.ours", 2097.152)
	wantKey(t, r, "gelu.exact.float32.speedup_vs_pytorch", 2)
	wantKey(t, r, "gelu.exact.float32.alloc_bytes_per_step", 100)
	// PyTorch as installed, slower than at its best: 5 ms.
	wantKey(t, r, "gelu.exact.float32.pytorch_as_installed", 4.194304/0.005)
	wantKey(t, r, "gelu.exact.float32.speedup_vs_pytorch_as_installed", 2.5)
	// ffn: 10 ms on the default (own GEMM), 8 ms on OpenBLAS, no PyTorch.
	sameRow(t, "ffn", d.Rows[2], []any{"ffn/8x4x16/float32", "ms", 10.0, "GOMAXPROCS=1", 8.0, "GOMAXPROCS=2, BLAS 1 thread", "—", "—", "—"})
	wantKey(t, r, "ffn.8x4x16.float32.other_blas", 8)
	r.Describe("*", "any")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"ffn.8x4x16.float32.other_blas_setting": "GOMAXPROCS=2, BLAS 1 thread",
		"ffn.8x4x16.float32.other_blas_name": "OpenBLAS 0.3.21 Haswell", "ffn.8x4x16.float32.ours_blas_name": "own GEMM"} {
		if got := s.Values[k]; got != want {
			t.Errorf("summary %s = %v, want %q", k, got, want)
		}
	}
	if got := s.Values["gelu.exact.float32.pytorch_as_installed_setting"]; got != "as installed (1 thread, BLAS 2 threads)" {
		t.Errorf("summary pytorch_as_installed_setting = %v", got)
	}
	for _, k := range []string{"ffn.8x4x16.float32.pytorch", "ffn.8x4x16.float32.pytorch_as_installed", "gelu.exact.float32.ours_blas_name", "gelu.exact.float32.other_blas"} {
		if _, ok := s.Values[k]; ok {
			t.Errorf("summary key %s set: for a side that never ran, or a workload without matrix products", k)
		}
	}
	delete(tl, Other)
	if d := tl.Overview(newReport(t), ws, "PyTorch"); len(d.Header) != 9 || len(d.Rows[0]) != 9 {
		t.Errorf("Overview without the other BLAS: %d columns, want 9", len(d.Header))
	}
}

func TestPairs(t *testing.T) {
	tl, ws := tablesTally(t)
	r := newReport(t)
	d := tl.Pairs(r, ws, Pair{Family: "gelu", Key: "gelu_over_copy", Bytes: CopyBytes, Header: []string{"h"},
		Partner: func(w Workload) string { return "copy/gelu-traffic/" + w.Dtype.String() }})
	if len(d.Rows) != 1 || d.Header[0] != "h" {
		t.Fatalf("Pairs: %d rows, header %q; want 1 row, the header given", len(d.Rows), d.Header)
	}
	// copy: 5·4·4194304 bytes in 1 ms = 83.88608 GB/s; GELU time ÷ copy
	// time: 2 ms / 1 ms ours, 4 ms / 0.5 ms PyTorch's.
	sameRow(t, "gelu/copy", d.Rows[0], []any{"exact", "float32", 83.88608, 2097.152, 4194.304, 2.0, 1048.576, 8388.608, 8.0})
	wantKey(t, r, "gelu.exact.float32.gelu_over_copy", 2)
	wantKey(t, r, "gelu.exact.float32.gelu_over_copy_pytorch", 8)
	// ffn's partner never ran: — for its values and no ratio.
	d = tl.Pairs(r, ws, Pair{Family: "ffn", Key: "step_over_gemm", Partner: func(w Workload) string { return "gemm/" + w.Args + "/" + w.Dtype.String() }})
	if len(d.Rows) != 1 {
		t.Fatalf("ffn pairs: %d rows, want 1", len(d.Rows))
	}
	sameRow(t, "ffn without its gemm", d.Rows[0], []any{"8x4x16", "float32", 10.0, "—", "—", "—", "—", "—"})
	if _, ok := r.Float("ffn.8x4x16.float32.step_over_gemm"); ok {
		t.Error("a ratio for a pair never measured")
	}
}

func TestSettingsTable(t *testing.T) {
	tl, ws := tablesTally(t)
	d := tl.SettingsTable(ws)
	wantHeader := []string{"workload", ownColumn + ": GOMAXPROCS=1", ownColumn + ": GOMAXPROCS=2",
		openBLASColumn + ": GOMAXPROCS=2, BLAS 1 thread", Peer + ": as installed (1 thread, BLAS 2 threads)", Peer + ": 1 thread", Peer + ": 2 threads"}
	if len(d.Header) != len(wantHeader) {
		t.Fatalf("header %q, want %q", d.Header, wantHeader)
	}
	for i := range wantHeader {
		if d.Header[i] != wantHeader[i] {
			t.Errorf("column %d %q, want %q", i, d.Header[i], wantHeader[i])
		}
	}
	// gelu at GOMAXPROCS=1: 4.194304 Melem in 3 ms.
	// PyTorch as installed: 5 ms.
	sameRow(t, "gelu", d.Rows[0], []any{"gelu/exact/float32", 1398.1013333333333, 2097.152, "—", 838.8608, 1048.576, "—"})
	sameRow(t, "ffn", d.Rows[2], []any{"ffn/8x4x16/float32", 10.0, "—", 8.0, "—", "—", "—"})
}

func TestMachine(t *testing.T) {
	tl, _ := tablesTally(t)
	if got := tl.BLAS(Other); got != "OpenBLAS 0.3.21 Haswell (libopenblas.so.0)" {
		t.Errorf("BLAS(Other) = %q, want the name without its thread count", got)
	}
	if got := tl.BLAS(Ours); got != "own GEMM (AVX-512)" {
		t.Errorf("BLAS(Ours) = %q, want the own GEMM's name without its thread count", got)
	}
	if tl.Column(Ours) != ownColumn || tl.Column(Other) != openBLASColumn || tl.Column(Peer) != Peer || (Tally{}).Column(Ours) != Ours {
		t.Errorf("Column: %q, %q, %q, empty tally %q", tl.Column(Ours), tl.Column(Other), tl.Column(Peer), (Tally{}).Column(Ours))
	}
	for name, want := range map[string]string{ownReported: "own GEMM", openBLASReported: "OpenBLAS 0.3.21 Haswell", "gonum (pure Go)": "gonum"} {
		if got := ShortBLAS(name); got != want {
			t.Errorf("ShortBLAS(%q) = %q, want %q", name, got, want)
		}
	}
	info := "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512f avx512bw\n"
	if got := cpuModel(strings.NewReader(info)); got != "AMD EPYC with AVX-512" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel(strings.NewReader("model name : X\nflags : avx2\n")); got != "X" {
		t.Errorf("cpuModel without AVX-512 = %q", got)
	}
	if got := osName("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n", "linux"); got != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("osName = %q", got)
	}
	if got := osName("NAME=x\n", "linux"); got != "linux" {
		t.Errorf("osName without PRETTY_NAME = %q, want the fallback", got)
	}
	if m := ThisMachine(); m.CPUs < 1 || m.Go == "" {
		t.Errorf("ThisMachine() = %+v", m)
	}
}
