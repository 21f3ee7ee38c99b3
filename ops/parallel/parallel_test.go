package parallel_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geluproject/gelu/ops/parallel"
)

// Every index is visited exactly once, for sizes around the thresholds and
// with one and two cores.
func TestForVisitsEachIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, parallel.MinGrain, 2*parallel.MinGrain - 1, 2 * parallel.MinGrain, 100003} {
			for _, grain := range []int{0, 1, 1000, parallel.MinGrain} {
				seen := make([]atomic.Int32, n)
				parallel.For(n, grain, parallel.Func(func(lo, hi int) {
					if lo < 0 || hi > n || lo >= hi {
						t.Errorf("n=%d: chunk [%d, %d)", n, lo, hi)
						return
					}
					for i := lo; i < hi; i++ {
						seen[i].Add(1)
					}
				}))
				for i := range seen {
					if c := seen[i].Load(); c != 1 {
						t.Fatalf("procs=%d n=%d grain=%d: index %d visited %d times", procs, n, grain, i, c)
					}
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// A body that calls For again finishes (no worker waits for itself).
func TestForNested(t *testing.T) {
	var total atomic.Int64
	parallel.For(8, 1, parallel.Func(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parallel.Elements(4*parallel.MinGrain, func(lo, hi int) { total.Add(int64(hi - lo)) })
		}
	}))
	if got, want := total.Load(), int64(8*4*parallel.MinGrain); got != want {
		t.Fatalf("nested total %d, want %d", got, want)
	}
}

// Rows keeps chunks to whole rows.
func TestRowsWholeRows(t *testing.T) {
	const rows, cols = 5000, 37
	var covered atomic.Int64
	parallel.Rows(rows, cols, func(lo, hi int) { covered.Add(int64(hi - lo)) })
	if covered.Load() != rows {
		t.Fatalf("rows covered %d, want %d", covered.Load(), rows)
	}
}

type addOne struct{ x []float64 }

func (k *addOne) Run(lo, hi int) {
	for i := lo; i < hi; i++ {
		k.x[i]++
	}
}

func TestForAllocatesNothing(t *testing.T) {
	k := &addOne{x: make([]float64, 1<<17)}
	parallel.For(len(k.x), parallel.MinGrain, k) // start the workers
	if a := testing.AllocsPerRun(20, func() { parallel.For(len(k.x), parallel.MinGrain, k) }); a != 0 {
		t.Fatalf("For allocates %v times per call, want 0", a)
	}
	// Nor after garbage collections, which empty a sync.Pool.
	if a := testing.AllocsPerRun(5, func() { runtime.GC(); runtime.GC(); parallel.For(len(k.x), parallel.MinGrain, k) }); a != 0 {
		t.Fatalf("For after two GCs allocates %v times per call, want 0", a)
	}
}

// FreeList: Get on an empty list makes a zero object; objects put back
// come out again, last in first out, without being reset.
func TestFreeList(t *testing.T) {
	var l parallel.FreeList[[2]int]
	a, b := l.Get(), l.Get()
	if a == b || *a != [2]int{} {
		t.Fatalf("two Gets from an empty list: %p %p (%v), want two new zero objects", a, b, *a)
	}
	a[0], b[0] = 1, 2
	l.Put(a)
	l.Put(b)
	if x, y, z := l.Get(), l.Get(), l.Get(); x != b || y != a || z == a || z == b || x[0] != 2 {
		t.Errorf("after Put(a), Put(b): Gets %p %p %p (x[0] = %d), want b, a, then a new one", x, y, z, x[0])
	}
}

// Several goroutines call For at once, some from inside a body, while the
// workers spin between jobs and take offers: each index is still visited
// exactly once per call.
func TestForConcurrentCallers(t *testing.T) {
	for _, procs := range []int{2, 4} {
		old := runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				const calls = 100
				n := 2*parallel.MinGrain + 1000*g
				seen := make([]atomic.Int32, n)
				for range calls {
					parallel.For(n, parallel.MinGrain/4, parallel.Func(func(lo, hi int) {
						if g == 0 && lo == 0 { // a nested loop in one chunk
							parallel.Elements(2*parallel.MinGrain, func(int, int) {})
						}
						for i := lo; i < hi; i++ {
							seen[i].Add(1)
						}
					}))
				}
				for i := range seen {
					if c := seen[i].Load(); c != calls {
						t.Errorf("procs=%d caller %d: index %d visited %d times in %d calls", procs, g, i, c, calls)
						return
					}
				}
			})
		}
		wg.Wait()
		runtime.GOMAXPROCS(old)
	}
}
