package gemm

// Throughput of the own GEMM against OpenBLAS on the project's shapes, in
// GFLOP/s (2·m·n·k per product), in one run:
//
//	go test ./ops/gemm -run '^$' -bench Own -benchtime 1s -count 3
//
// GELU_GEMM_KERNEL=avx2 (or generic) benchmarks another path;
// GELU_BENCH_THREADS=1 runs both libraries on one thread. Besides wall-clock
// GFLOP/s the benchmark reports GFLOP per CPU-second of the whole process
// (cpu-GFLOP/s): on a shared, oversubscribed machine it moves less with the
// load, and on one thread it compares the kernels themselves. OpenBLAS is
// loaded with a small purego loader of its own (ownOpenBLAS, in
// own_bench_dl_test.go) so that the benchmark does not depend on the rest
// of the package.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// ownShape is one product: C (m×n) = op(A)·op(B) with inner dimension k.
type ownShape struct {
	name    string
	tA, tB  bool
	m, n, k int
}

// ownBenchShapes are the products of an FFN layer (tokens T, width d,
// hidden H: forward X·W1ᵀ, backward dY·W and dYᵀ·X) and of the MNIST MLP
// (batch 128, 784→128→128→10, the same three layouts per layer), plus a
// large square product for the machine's peak.
func ownBenchShapes() []ownShape {
	var s []ownShape
	layer := func(prefix string, rows, in, out int) {
		s = append(s,
			ownShape{name: fmt.Sprintf("%s/fwd_XWt_%dx%dx%d", prefix, rows, out, in), tB: true, m: rows, n: out, k: in},
			ownShape{name: fmt.Sprintf("%s/bwd_dYW_%dx%dx%d", prefix, rows, in, out), m: rows, n: in, k: out},
			ownShape{name: fmt.Sprintf("%s/bwd_dYtX_%dx%dx%d", prefix, out, in, rows), tA: true, m: out, n: in, k: rows},
		)
	}
	layer("ffn512", 512, 256, 1024)
	layer("ffn512", 512, 1024, 256)
	layer("ffn256", 256, 768, 3072)
	layer("ffn256", 256, 3072, 768)
	layer("mnist", 128, 784, 128)
	layer("mnist", 128, 128, 128)
	layer("mnist", 128, 128, 10)
	s = append(s, ownShape{name: "peak/square_1024", m: 1024, n: 1024, k: 1024})
	return s
}

func BenchmarkOwn(b *testing.B) {
	ob, err := ownLoadOpenBLAS()
	if err != nil {
		b.Logf("OpenBLAS not benchmarked: %v", err)
	}
	if v := os.Getenv("GELU_BENCH_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("GELU_BENCH_THREADS=%q: %v", v, err)
		}
		prev := ownThreadCount()
		defer func() { _ = Own{}.SetThreads(prev) }()
		if err := (Own{}).SetThreads(n); err != nil {
			b.Fatal(err)
		}
		if ob != nil {
			ob.setThreads(int32(n))
		}
	}
	b.Logf("own: %s", Own{}.Name())
	for _, s := range ownBenchShapes() {
		b.Run(s.name+"/float32/own", func(b *testing.B) { ownBench[float32](b, s, nil) })
		if ob != nil {
			b.Run(s.name+"/float32/openblas", func(b *testing.B) { ownBench[float32](b, s, ob) })
		}
		b.Run(s.name+"/float64/own", func(b *testing.B) { ownBench[float64](b, s, nil) })
		if ob != nil {
			b.Run(s.name+"/float64/openblas", func(b *testing.B) { ownBench[float64](b, s, ob) })
		}
	}
}

func ownBench[T ownFloat](b *testing.B, s ownShape, ob *ownOpenBLAS) {
	r := rand.New(rand.NewPCG(3, 4))
	x, y, z := make([]T, s.m*s.k), make([]T, s.k*s.n), make([]T, s.m*s.n)
	for i := range x {
		x[i] = T(r.NormFloat64())
	}
	for i := range y {
		y[i] = T(r.NormFloat64())
	}
	lda, ldb := s.k, s.n
	if s.tA {
		lda = s.m
	}
	if s.tB {
		ldb = s.k
	}
	cpu0 := ownCPUTime()
	for b.Loop() {
		if ob != nil {
			ob.gemm(s, any(x), lda, any(y), ldb, any(z), s.n)
		} else {
			// What Sgemm/Dgemm do, generically.
			if ownCheck(s.tA, s.tB, s.m, s.n, s.k, x, lda, y, ldb, z, s.n) == nil {
				ownGemm(s.tA, s.tB, s.m, s.n, s.k, 1, x, lda, y, ldb, 0, z, s.n)
			}
		}
	}
	cpu := ownCPUTime() - cpu0
	flop := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
	b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu > 0 { // 0 where the process's CPU time is not known
		b.ReportMetric(flop/cpu.Seconds()/1e9, "cpu-GFLOP/s")
	}
}

// BenchmarkOwnThreshold times cubes around the size where splitting over
// threads starts to pay (minWorkPerPart), on one thread and split, to
// place that threshold:
//
//	go test ./ops/gemm -run '^$' -bench OwnThreshold -count 5
func BenchmarkOwnThreshold(b *testing.B) {
	prev := ownThreadCount()
	defer func() { _ = Own{}.SetThreads(prev) }()
	kern := ownKernelOf[float32]()
	for _, size := range []int{32, 48, 64, 80, 96, 128, 192, 256, 384, 512} {
		s := ownShape{name: fmt.Sprint(size), m: size, n: size, k: size}
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%d/threads%d", size, threads), func(b *testing.B) {
				_ = Own{}.SetThreads(threads)
				saved := kern.minWorkPerPart
				kern.minWorkPerPart = 1 // split whatever the size
				defer func() { kern.minWorkPerPart = saved }()
				ownBench[float32](b, s, nil)
			})
		}
	}
}

// BenchmarkOwnSmallPath times the products of ownBenchShapes that fit the
// small-matrix path (ownSmallMax) with it and without it (packing as large
// products do), on one thread:
//
//	go test ./ops/gemm -run '^$' -bench OwnSmallPath -count 5
func BenchmarkOwnSmallPath(b *testing.B) {
	prevThreads, prevMax := ownThreadCount(), ownSmallMax
	defer func() { _ = Own{}.SetThreads(prevThreads); ownSmallMax = prevMax }()
	_ = Own{}.SetThreads(1)
	for _, s := range ownBenchShapes() {
		if !ownSmall(s.m, s.n, s.k) {
			continue
		}
		for _, path := range []struct {
			name string
			max  int
		}{{"packed", 0}, {"small", prevMax}} {
			b.Run(s.name+"/float32/"+path.name, func(b *testing.B) {
				ownSmallMax = path.max
				ownBench[float32](b, s, nil)
			})
			b.Run(s.name+"/float64/"+path.name, func(b *testing.B) {
				ownSmallMax = path.max
				ownBench[float64](b, s, nil)
			})
		}
	}
}
