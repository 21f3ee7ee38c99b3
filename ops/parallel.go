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
func parallelFor(n int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < minParallel || workers < 2 {
		body(0, n)
		return
	}
	if max := n / (minParallel / 2); workers > max {
		workers = max
	}
	chunks := min(workers*chunksPerWorker, n/(minParallel/2))
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
