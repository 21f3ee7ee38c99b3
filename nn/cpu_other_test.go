//go:build !linux

package nn_test

// processCPU is not measured here (see cpu_linux_test.go).
func processCPU() float64 { return 0 }
