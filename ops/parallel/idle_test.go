//go:build unix

package parallel_test

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/geluproject/gelu/ops/parallel"
)

// processCPU is the CPU time the process has used so far.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The workers spin only briefly after a loop, then park: an idle process
// burns no CPU. A worker that kept spinning would use the whole 200 ms.
func TestIdleWorkersPark(t *testing.T) {
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	// Chunks of 1 ms, so that the worker surely takes part.
	slow := parallel.Func(func(lo, hi int) { time.Sleep(time.Duration(hi-lo) * time.Millisecond) })
	for range 3 {
		parallel.For(16, 1, slow)
	}
	before := processCPU(t)
	time.Sleep(200 * time.Millisecond)
	if used := processCPU(t) - before; used > 20*time.Millisecond {
		t.Fatalf("%v of CPU over 200 ms idle after a loop, want about 0", used)
	}
}
