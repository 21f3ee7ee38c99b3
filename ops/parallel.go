package ops

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minParallel is the slice length below which kernels stay on one goroutine:
// under it, waking a second core costs more than it saves.
const minParallel = 1 << 15

// chunksPerWorker is how many chunks each worker gets on average. Workers
// take chunks from a shared counter, so when a core is slowed (by another
// process on a shared machine, say) the others take over its share instead
// of waiting for it at the end.
const chunksPerWorker = 8

// parallelFor splits [0, n) into contiguous chunks and runs body on each,
// on up to GOMAXPROCS goroutines. Chunk boundaries depend only on n and
// GOMAXPROCS and each element is written by exactly one chunk, so results
// do not depend on which goroutine ran which chunk.
func parallelFor(n int, body func(lo, hi int)) { parallelWork(n, n, body) }

// parallelRows is parallelFor over rows of cols elements each: the amount
// of work (rows·cols), not the number of rows, decides how many goroutines
// pay off, and a chunk is always whole rows.
func parallelRows(rows, cols int, body func(lo, hi int)) { parallelWork(rows, rows*cols, body) }

// parallelWork runs body over chunks of [0, n), where the whole range is
// cost elements of work.
func parallelWork(n, cost int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if cost < minParallel || workers < 2 || n < 2 {
		body(0, n)
		return
	}
	grains := cost / (minParallel / 2) // pieces of work worth a goroutine
	workers = min(workers, grains, n)
	chunks := min(workers*chunksPerWorker, grains, n)
	size := (n + chunks - 1) / chunks
	var next atomic.Int64
	work := func() {
		for {
			lo := int(next.Add(1)-1) * size
			if lo >= n {
				return
			}
			body(lo, min(lo+size, n))
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
