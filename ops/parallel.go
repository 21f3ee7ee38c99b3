package ops

import (
	"runtime"
	"sync"
)

// minParallel is the slice length below which kernels stay on one goroutine:
// under it, waking a second core costs more than it saves.
const minParallel = 1 << 15

// parallelFor splits [0, n) into contiguous chunks, one per CPU, and runs
// body on each. Chunk boundaries depend only on n and GOMAXPROCS, and each
// element is written by exactly one chunk, so results are deterministic.
func parallelFor(n int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < minParallel || workers < 2 {
		body(0, n)
		return
	}
	if max := n / (minParallel / 2); workers > max {
		workers = max
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			body(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	body(0, min(chunk, n))
	wg.Wait()
}
