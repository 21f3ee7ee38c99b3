package gemm

// The machine's peak bf16 rate, measured as PeakGFLOPS measures the
// float32 one: a register-only loop of independent VDPBF16PS
// (bf16_amd64.s) on as many OS threads as asked.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// bf16PeakAccs accumulators, each updated bf16PeakUnroll times per
// iteration of the loop: the constants of ./asm/bf16.
const bf16PeakAccs, bf16PeakUnroll = 24, 2

// bf16PeakFlops is the floating-point operations of one iteration: each
// VDPBF16PS on zmm does 16 lanes × 2 multiply-adds.
const bf16PeakFlops = bf16PeakAccs * bf16PeakUnroll * 16 * 2 * 2

// ErrPeakBF16Unknown is PeakBF16GFLOPS's error where the CPU (or the
// build) has no AVX512_BF16: there is no VDPBF16PS loop to time.
var ErrPeakBF16Unknown = errors.New("gemm: bf16 peak unknown: no AVX512_BF16 here, no VDPBF16PS loop to time")

// PeakBF16GFLOPS measures the peak rate of VDPBF16PS on threads threads
// (GOMAXPROCS must allow them to run in parallel), in GFLOP/s counting 2
// per multiply-add: the bound a bf16 product's GFLOP/s is a share of on
// the AVX512_BF16 path. The fastest of 100 runs of at least a millisecond.
func PeakBF16GFLOPS(threads int) (float64, error) {
	if bf16PeakLoop == nil {
		return 0, ErrPeakBF16Unknown
	}
	if threads < 1 {
		return 0, fmt.Errorf("gemm: PeakBF16GFLOPS with %d threads, want ≥ 1", threads)
	}
	run := func(iters int) float64 {
		var wg sync.WaitGroup
		for range threads {
			wg.Go(func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				bf16PeakLoop(iters)
			})
		}
		wg.Wait()
		return float64(threads * iters * bf16PeakFlops)
	}
	iters := 64
	for {
		t0 := time.Now()
		run(iters)
		if time.Since(t0) >= time.Millisecond || iters >= 1<<30 {
			break
		}
		iters *= 2
	}
	best := 0.0
	for range 100 {
		t0 := time.Now()
		flops := run(iters)
		best = max(best, flops/time.Since(t0).Seconds()/1e9)
	}
	return best, nil
}
