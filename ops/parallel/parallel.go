package parallel

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
// state: the workers live as long as the process. After a loop they spin
// for the next one for a while (SetSpin; 100 µs by default), then park.
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
	j := jobs.Get()
	j.body, j.n, j.size = body, n, (n+chunks-1)/chunks
	j.next.Store(0)
	startWorkers(workers - 1)
	// Offer the job to idle workers: a body that itself calls For (or two
	// callers at once) must never wait for a busy one. Workers still
	// spinning after their last job take it from the offer slot, with no
	// system call on either side; parked ones are woken through the
	// channel. Either kind claims one of the job's offers (want) and runs
	// chunks; chunks nobody else takes, the caller runs. Once it runs out,
	// it withdraws the offers not yet claimed, so it never waits for a
	// worker that is slow to wake up (on a loaded machine, say) and would
	// find nothing left to do.
	helpers := workers - 1
	j.wg.Add(helpers)
	j.helpers.Store(int32(helpers))
	j.want.Store(int32(helpers))
	wake := helpers
	if offer.CompareAndSwap(nil, j) {
		wake -= min(int(spinning.Load()), helpers)
	}
	for range wake {
		select {
		case tasks <- j:
		default:
		}
	}
	j.work()
	offer.CompareAndSwap(j, nil)
	if left := j.want.Swap(0); left > 0 {
		j.helpers.Add(-left)
		j.wg.Add(-int(left))
	}
	// The helpers that claimed the job are on their last chunks: spin
	// until they are done rather than park, so that the last one's Done
	// has no goroutine to wake (a futex call on each side).
	spin(func() bool { return j.helpers.Load() == 0 })
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
	// helpers counts the workers handed the job that have not finished
	// it; each decrements it before wg.Done, so a caller that sees 0
	// finds wg at 0 too (or about to be) and does not park.
	helpers atomic.Int32
	// want is how many more workers may claim the job; only positive
	// while the caller is looking for help.
	want atomic.Int32
	wg   sync.WaitGroup
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

// claim takes one of the job's offers, if one is left. A worker may hold a
// pointer to a job that has since finished and been reused: want is 0
// unless the job is offered now, so a late claim fails, or takes a current
// offer.
func (j *job) claim() bool {
	for {
		w := j.want.Load()
		if w <= 0 {
			return false
		}
		if j.want.CompareAndSwap(w, w-1) {
			if w == 1 {
				offer.CompareAndSwap(j, nil) // the slot is free for others
			}
			return true
		}
	}
}

// helped runs the job as a worker.
func (j *job) helped() {
	j.work()
	j.helpers.Add(-1)
	j.wg.Done()
}

// spinTime bounds how long a worker that has finished a job looks for the
// next one before it parks on the channel, and how long a caller waits for
// its helpers before it parks on the WaitGroup, in nanoseconds (SetSpin).
// The loops of a training step mostly follow each other within a few to a
// hundred microseconds, so a worker still spinning takes the next one
// without a futex wake-up (tens of microseconds on a virtual machine, more
// on a loaded one); between steps, or when the process is idle, the
// workers park after this long and burn no CPU. Measured on a 2-core VM:
// 100 µs took train/bench's FFN step from 8.6 to 7.3 ms and its six GEMMs
// from 6.0 to 4.8 ms; 50 µs gained half as much. With another process
// keeping one of the cores busy, the same step was 9–13% slower than
// without spinning: the spinning thread takes CPU from the caller.
var spinTime atomic.Int64

// DefaultSpin is the spin time workers start with, unless the environment
// variable GELU_SPIN_US gives another (whole microseconds, 0: park at once).
const DefaultSpin = 100 * time.Microsecond

// spinEnv is the environment variable read at start-up.
const spinEnv = "GELU_SPIN_US"

func init() { spinTime.Store(int64(spinFromEnv(os.Getenv(spinEnv)))) }

// spinFromEnv is the spin time for a value of GELU_SPIN_US: DefaultSpin
// when it is empty or not a whole number of microseconds from 0 to 10⁶.
func spinFromEnv(v string) time.Duration {
	us, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || us < 0 || us > 1e6 {
		return DefaultSpin
	}
	return time.Duration(us) * time.Microsecond
}

// SetSpin sets how long idle workers look for the next loop before they
// park (see DefaultSpin), from 0 (park at once: best when other processes
// compete for the cores) to one second.
func SetSpin(d time.Duration) error {
	if d < 0 || d > time.Second {
		return fmt.Errorf("parallel: spin time %v, want 0 to 1s", d)
	}
	spinTime.Store(int64(d))
	return nil
}

// Spin returns the spin time in use (SetSpin, GELU_SPIN_US).
func Spin() time.Duration { return time.Duration(spinTime.Load()) }

// spin calls done until it returns true or spinTime has passed, and
// reports the last result. It yields the processor every few checks, so
// that a goroutine waiting for this one's P (on a machine with fewer cores
// than GOMAXPROCS, say) is not held up.
func spin(done func() bool) bool {
	if spinTime.Load() == 0 {
		return done()
	}
	var start time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i%64 == 63 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > time.Duration(spinTime.Load()) {
				return false
			}
			runtime.Gosched()
		}
	}
}

var (
	jobs  FreeList[job]
	tasks = make(chan *job)

	// offer holds a job for spinning workers (spinning counts them);
	// the caller takes back the offers not taken by the time it has run
	// out of chunks.
	offer    atomic.Pointer[job]
	spinning atomic.Int32

	poolMu  sync.Mutex
	started int
)

// startWorkers makes sure at least n workers wait for jobs. They block on
// the channel when idle.
func startWorkers(n int) {
	poolMu.Lock()
	defer poolMu.Unlock()
	for ; started < n; started++ {
		go worker()
	}
}

func worker() {
	var taken *job
	takeOffer := func() bool {
		if o := offer.Load(); o != nil && o.claim() {
			taken = o
			return true
		}
		return false
	}
	for j := range tasks {
		if j.claim() {
			j.helped()
		}
		// Look for the next job for a while before parking again.
		for {
			spinning.Add(1)
			ok := spin(takeOffer)
			spinning.Add(-1)
			if !ok {
				break
			}
			taken.helped()
			taken = nil
		}
	}
}

// FreeList is a stack of reusable objects that, unlike a sync.Pool, the
// garbage collector never empties: after a collection, the loops and
// matrix products of a training step find their jobs and packing buffers
// where they left them instead of allocating new ones (sync.Pools cost
// the GPT step 1–3 allocations per step). It keeps as many objects as
// were ever in use at once. The zero value is empty and ready; Get returns
// a new zero T when it is empty.
type FreeList[T any] struct {
	mu    sync.Mutex
	items []*T
}

// Get takes an object from the list, or makes a new one.
func (l *FreeList[T]) Get() *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.items); n > 0 {
		x := l.items[n-1]
		l.items = l.items[:n-1]
		return x
	}
	return new(T)
}

// Put gives x back for a later Get.
func (l *FreeList[T]) Put(x *T) {
	l.mu.Lock()
	l.items = append(l.items, x)
	l.mu.Unlock()
}
