package nn_test

import "syscall"

// processCPU is the CPU time of the whole process (every thread: GEMM and
// parallel workers too) in seconds; on a shared machine it measures the
// work done where wall-clock time measures the load.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
