package optim

// A small pool of long-lived workers that splits elementwise loops over
// contiguous chunks. Optimizer steps run every iteration of training, so the
// pool hands out work without allocating: a kernel is a pointer to a struct
// the optimizer keeps, passed as an interface, never a fresh closure.

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minChunk is the smallest chunk worth a second core: below it, waking a
// worker costs more than the loop.
const minChunk = 1 << 14

// chunker is an elementwise kernel over [lo, hi).
type chunker interface{ run(lo, hi int) }

type task struct {
	k      chunker
	lo, hi int
	wg     *sync.WaitGroup
}

var pool struct {
	mu      sync.Mutex
	workers int
	tasks   chan task
}

// startWorkers makes sure at least n workers wait for tasks. Workers live
// as long as the process, blocked on the channel when idle.
func startWorkers(n int) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.tasks == nil {
		pool.tasks = make(chan task)
	}
	for ; pool.workers < n; pool.workers++ {
		go func() {
			for t := range pool.tasks {
				t.k.run(t.lo, t.hi)
				t.wg.Done()
			}
		}()
	}
}

// parallelFor runs k over [0, n) in contiguous chunks of at least grain
// items, at most one per CPU, and returns when all are done. wg must be owned by the caller's kernel (so
// that nothing is allocated per call) and not used concurrently. Every
// element is handled by exactly one chunk; kernels are elementwise, so the
// results do not depend on the chunking.
func parallelFor(n, grain int, k chunker, wg *sync.WaitGroup) {
	workers := runtime.GOMAXPROCS(0)
	if most := n / grain; workers > most {
		workers = most
	}
	if workers < 2 {
		k.run(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	if grain >= 16 {
		// Multiples of 16 elements keep chunk borders off shared cache lines.
		chunk = (chunk + 15) &^ 15
	}
	startWorkers(workers - 1)
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		pool.tasks <- task{k: k, lo: lo, hi: min(lo+chunk, n), wg: wg}
	}
	k.run(0, min(chunk, n))
	wg.Wait()
}

// firstBad records the lowest index at which a kernel found a non-finite
// value, across chunks running concurrently.
type firstBad struct{ v atomic.Int64 }

const noBad = int64(^uint64(0) >> 1)

func (f *firstBad) reset() { f.v.Store(noBad) }

func (f *firstBad) record(i int) {
	for {
		old := f.v.Load()
		if int64(i) >= old || f.v.CompareAndSwap(old, int64(i)) {
			return
		}
	}
}

// get returns the recorded index, or -1.
func (f *firstBad) get() int {
	if v := f.v.Load(); v != noBad {
		return int(v)
	}
	return -1
}
