//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package gemm

// One owner of the cores: OpenBLAS on one thread with the products split
// over ops/parallel's workers, or on its own threads one product at a time.

import (
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/parallel"
)

// workersOpenBLAS returns OpenBLAS with products split over the workers
// and parts of at least minWork multiply-adds, restoring everything after
// the test.
func workersOpenBLAS(t *testing.T, minWork int) *OpenBLAS {
	t.Helper()
	ob := loadOpenBLAS(t)
	saved, savedMin, savedLib := ob.cores.workers, obMinWorkPerPart, ob.getNum()
	ob.cores.workers, obMinWorkPerPart = true, minWork
	ob.setNum(1)
	t.Cleanup(func() {
		ob.cores.workers, obMinWorkPerPart = saved, savedMin
		ob.setNum(savedLib)
	})
	return ob
}

// The products are correct split into 2 and 3 parts (small parts forced),
// every transpose case, padding untouched; and bit for bit the same as on
// one thread, so that a training step gives the same numbers at every
// thread count.
func TestOpenBLASSplitBitIdentical(t *testing.T) {
	ob := workersOpenBLAS(t, 1<<10)
	splitBitIdentical[float32](t, ob)
	splitBitIdentical[float64](t, ob)
	for _, threads := range []int{2, 3} {
		if err := ob.SetThreads(threads); err != nil {
			t.Fatal(err)
		}
		checkGEMM[float32](t, ob, 0x1p-24)
		checkGEMM[float64](t, ob, 0x1p-53)
	}
}

func splitBitIdentical[T graph.Float](t *testing.T, ob *OpenBLAS) {
	r := rng.New(11, "openblas-split")
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			// Tall, wide, a k beyond OpenBLAS's inner blocking, a large
			// one, and edges that are not whole tiles.
			for _, s := range [][3]int{{200, 40, 64}, {75, 1000, 64}, {96, 80, 1100}, {310, 300, 300}, {77, 131, 129}} {
				c := gemmCase{tA, tB, s[0], s[1], s[2], -0.75, 1.5}
				a, lda, b, ldb, cm, ldc := operands[T](c, r)
				var results [][]T
				for _, threads := range []int{1, 2, 3} {
					if err := ob.SetThreads(threads); err != nil {
						t.Fatal(err)
					}
					if parts := ob.cores.split(c.m, c.n, c.k); parts != threads {
						t.Fatalf("%v on %d threads: %d parts, want %d", c, threads, parts, threads)
					}
					got := slices.Clone(cm)
					gemmWith(ob, c, a, lda, b, ldb, got, ldc)
					results = append(results, got)
				}
				for i := range results[0] {
					x, y, z := results[0][i], results[1][i], results[2][i]
					if math.Float64bits(float64(x)) != math.Float64bits(float64(y)) || math.Float64bits(float64(x)) != math.Float64bits(float64(z)) {
						t.Fatalf("%v: C[%d] = %v on 1 thread, %v split in 2, %v in 3: want the same bits", c, i, x, y, z)
					}
				}
			}
		}
	}
}

// How a product is split: no more parts than threads, whole tiles of rows
// or minimum work allow, and never when OpenBLAS runs on its own threads.
func TestOpenBLASSplitChoice(t *testing.T) {
	o := coreOwner{workers: true}
	o.parts.Store(2)
	for _, c := range []struct{ m, n, k, parts int }{
		{512, 1024, 256, 2}, {1024, 512, 256, 2}, {48, 8192, 4096, 2},
		{256, 256, 32, 1},   // an attention product of T 256, d_h 32: below the minimum work
		{47, 8192, 4096, 1}, // fewer than two tiles of rows
		{10, 128, 8192, 1},  // an MLP's output layer
	} {
		if parts := o.split(c.m, c.n, c.k); parts != c.parts {
			t.Errorf("split(%d, %d, %d) = %d parts, want %d", c.m, c.n, c.k, parts, c.parts)
		}
	}
	lib := coreOwner{}
	lib.lib.Store(2)
	if parts := lib.split(1024, 1024, 1024); parts != 1 {
		t.Errorf("OpenBLAS on its own threads: split into %d parts, want none", parts)
	}
}

// A split product allocates nothing once warm, like a whole one.
func TestOpenBLASSplitAllocatesNothing(t *testing.T) {
	if ownRaceEnabled {
		t.Skip("the race detector makes pools drop objects at random")
	}
	ob := workersOpenBLAS(t, 1<<10)
	if err := ob.SetThreads(2); err != nil {
		t.Fatal(err)
	}
	const m, n, k = 128, 64, 64
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	if parts := ob.cores.split(m, n, k); parts != 2 {
		t.Fatalf("%d parts, want 2", parts)
	}
	if got := testing.AllocsPerRun(50, func() {
		ob.Sgemm('N', 'N', m, n, k, 1, a, k, b, n, 0, c, n)
	}); got != 0 {
		t.Errorf("a split Sgemm: %v allocations per call, want 0", got)
	}
}

// On OpenBLAS's own threads (more than one), a product waits while
// another runs: while the test holds the product lock, a product started
// on a worker does not finish; once released, it does, correctly.
func TestOpenBLASOwnThreadsOneProductAtATime(t *testing.T) {
	ob := loadOpenBLAS(t)
	saved, savedLib := ob.cores.workers, ob.getNum()
	ob.cores.workers = false
	ob.cores.setThreads(ob, 2)
	t.Cleanup(func() {
		ob.cores.workers = saved
		ob.setNum(savedLib)
		ob.cores.lib.Store(savedLib)
	})
	if !strings.Contains(ob.Name(), "its own threads") || ob.Threads() != 2 {
		t.Errorf("Name() = %q, Threads() = %d: want its own 2 threads named", ob.Name(), ob.Threads())
	}
	c := gemmCase{false, false, 64, 64, 64, 1, 0}
	a, lda, b, ldb, cm, ldc := operands[float64](c, rng.New(3, "one-at-a-time"))
	want, _ := naiveGEMM(c, a, lda, b, ldb, cm, ldc)
	ob.cores.one.Lock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		gemmWith(ob, c, a, lda, b, ldb, cm, ldc)
		close(done)
	}()
	select {
	case <-done:
		t.Error("a product ran while another held OpenBLAS's threads")
	case <-time.After(50 * time.Millisecond):
	}
	ob.cores.one.Unlock()
	wg.Wait()
	for i := range cm {
		if i%ldc < c.n && math.Abs(cm[i]-want[i]) > 1e-12 {
			t.Fatalf("C[%d] = %v, want %v", i, cm[i], want[i])
		}
	}
}

// Products called from inside a parallel loop (the attention's per-head
// products) run whole on their worker, split or not, and correctly.
func TestOpenBLASProductsInParallelLoop(t *testing.T) {
	ob := workersOpenBLAS(t, 1<<10)
	if err := ob.SetThreads(2); err != nil {
		t.Fatal(err)
	}
	const heads = 8
	c := gemmCase{false, true, 64, 64, 32, 1, 0}
	r := rng.New(5, "heads")
	type operand struct {
		a, b, c, want []float64
		lda, ldb, ldc int
	}
	ops := make([]operand, heads)
	for h := range ops {
		a, lda, b, ldb, cm, ldc := operands[float64](c, r)
		want, _ := naiveGEMM(c, a, lda, b, ldb, cm, ldc)
		ops[h] = operand{a, b, cm, want, lda, ldb, ldc}
	}
	parallel.For(heads, 1, parallel.Func(func(lo, hi int) {
		for h := lo; h < hi; h++ {
			o := ops[h]
			gemmWith(ob, c, o.a, o.lda, o.b, o.ldb, o.c, o.ldc)
		}
	}))
	for h, o := range ops {
		for i := range o.c {
			if i%o.ldc < c.n && math.Abs(o.c[i]-o.want[i]) > 1e-12 {
				t.Fatalf("head %d: C[%d] = %v, want %v", h, i, o.c[i], o.want[i])
			}
		}
	}
}

// At start-up the environment decides the owner: OpenBLAS's own threads
// when OPENBLAS_NUM_THREADS is set, else the workers with OpenBLAS on one
// thread (a child process each, OpenBLAS forced).
func TestOpenBLASThreadsFromEnv(t *testing.T) {
	loadOpenBLAS(t)
	for env, own := range map[string]bool{"OPENBLAS_NUM_THREADS=2": true, "GELU_UNUSED=1": false} {
		cmd := selfCommand("-test.run=^TestBLASEnvAtStartup$", "-test.count=1")
		cmd.Env = append(withoutThreadEnv(os.Environ()), "GELU_BLAS_CHILD=1", "GELU_BLAS=openblas", "GOMAXPROCS=2", env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child with %s: %v\n%s", env, err, out)
		}
		if got := strings.Contains(string(out), "its own threads"); got != own || !strings.Contains(string(out), "2 threads") {
			t.Errorf("%s: child printed %q, want 2 threads, OpenBLAS's own: %v", env, out, own)
		}
	}
}

// withoutThreadEnv is env without the variables OpenBLAS reads its thread
// count from.
func withoutThreadEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return slices.ContainsFunc(threadEnv, func(v string) bool { return strings.HasPrefix(kv, v+"=") })
	})
}
