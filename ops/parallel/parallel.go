package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// MinGrain is the smallest number of elements worth a core of its own in an
// elementwise loop: below twice this, waking a second core costs more than
// it saves, and the loop runs on the caller's goroutine.
const MinGrain = 1 << 14

// chunksPerWorker is how many chunks each worker gets on average. Workers
// take chunks from a shared counter, so when a core is slowed (by another
// process on a shared machine, say) the others take over its share instead
// of waiting for it at the end.
const chunksPerWorker = 8

// Body is a loop body over the half-open range [lo, hi).
type Body interface{ Run(lo, hi int) }

// Func adapts a function to Body. A loop that runs every training step can
// instead pass a pointer to a struct it keeps, so that nothing is allocated
// per call.
type Func func(lo, hi int)

// Run calls f(lo, hi).
func (f Func) Run(lo, hi int) { f(lo, hi) }

// For runs body over [0, n) in contiguous chunks of at least grain items, on
// up to GOMAXPROCS cores, and returns when every chunk is done. Chunk
// boundaries depend only on n, grain and GOMAXPROCS, and each index belongs
// to exactly one chunk, so an elementwise body gives results that do not
// depend on which core ran which chunk. For allocates nothing in steady
// state: the workers live as long as the process.
func For(n, grain int, body Body) {
	grain = max(grain, 1)
	workers := min(runtime.GOMAXPROCS(0), n/grain)
	if workers < 2 {
		if n > 0 {
			body.Run(0, n)
		}
		return
	}
	chunks := min(workers*chunksPerWorker, n/grain)
	j := jobs.Get().(*job)
	j.body, j.n, j.size = body, n, (n+chunks-1)/chunks
	j.next.Store(0)
	startWorkers(workers - 1)
	for w := 1; w < workers; w++ {
		// Hand the job only to an idle worker: a body that itself calls
		// For (or two callers at once) must never wait for a busy one.
		// Chunks nobody else takes, the caller runs.
		j.wg.Add(1)
		select {
		case tasks <- j:
		default:
			j.wg.Done()
		}
	}
	j.work()
	j.wg.Wait()
	j.body = nil
	jobs.Put(j)
}

// Elements is For over an elementwise loop of n items, with the default
// grain MinGrain.
func Elements(n int, body func(lo, hi int)) { For(n, MinGrain, Func(body)) }

// Rows is For over rows of cols elements each: the amount of work
// (rows·cols), not the number of rows, decides how many cores pay off, and
// a chunk is always whole rows.
func Rows(rows, cols int, body func(lo, hi int)) {
	For(rows, RowGrain(cols), Func(body))
}

// RowGrain is the grain Rows uses for rows of cols elements, for a
// per-row loop that passes its own Body to For.
func RowGrain(cols int) int { return (MinGrain + max(cols, 1) - 1) / max(cols, 1) }

// job is one call of For, shared by the goroutines that work on it.
type job struct {
	body    Body
	n, size int
	next    atomic.Int64
	wg      sync.WaitGroup
}

func (j *job) work() {
	for {
		lo := int(j.next.Add(1)-1) * j.size
		if lo >= j.n {
			return
		}
		j.body.Run(lo, min(lo+j.size, j.n))
	}
}

var (
	jobs  = sync.Pool{New: func() any { return new(job) }}
	tasks = make(chan *job)

	poolMu  sync.Mutex
	started int
)

// startWorkers makes sure at least n workers wait for jobs. They block on
// the channel when idle.
func startWorkers(n int) {
	poolMu.Lock()
	defer poolMu.Unlock()
	for ; started < n; started++ {
		go func() {
			for j := range tasks {
				j.work()
				j.wg.Done()
			}
		}()
	}
}
