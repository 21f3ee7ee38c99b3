package activation

// CPU time per element of each kernel path, on one in-cache block, from
// the thread's CPU clock: on a shared machine (other jobs on the cores)
// wall-clock Melem/s swings with the load, while CPU time per element
// measures the kernel's own work (it still grows somewhat when a
// hyperthread sibling is busy). Not the memory-bound throughput of
// BenchmarkGELUForwardBackward, which runs 4M elements on every core.
//
//	go test ./ops/activation -run '^$' -bench KernelCPUTime -benchtime 2000x

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/simd"
)

func threadCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkGELUKernelCPUTime(b *testing.B) {
	r := rng.New(1, "cpu time")
	n := simd.Block // below parallel's threshold: runs on this goroutine
	x, g, d := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], g[i] = float32(3*r.Normal()), float32(r.Normal())
	}
	for _, p := range simd.Paths() {
		for _, a := range []Activation{GELU, GELUTanh, GELUSigmoid, SiLU} {
			for k := 0; k <= 2; k++ {
				b.Run(p.String()+"/"+a.String()+"/float32/"+[]string{"forward", "backward", "backward2"}[k], func(b *testing.B) {
					defer simd.Use(simd.Use(p))
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					t0 := threadCPU()
					for range b.N {
						if k == 0 {
							forward(a, d, x)
						} else {
							derivative(a, k, d, x, g, false)
						}
					}
					b.ReportMetric((threadCPU()-t0)/float64(b.N*n), "cpu-ns/elem")
				})
			}
		}
	}
}
