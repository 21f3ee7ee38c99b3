package gemm

// The measured exception to the default: CPU models on which OpenBLAS is
// the default although the own AVX-512 kernels run there.

import (
	"bufio"
	"os"
	"strings"
	"sync"
)

// openBLASFirstCPUs are the CPU models, exactly as CPUModel reads them, on
// which the default BLAS is OpenBLAS although the own AVX-512 kernels run:
// those whose benchmark report (go run ./examples/benchmark, section "The
// default BLAS on this CPU") found OpenBLAS faster in the training steps at
// each side's best setting. Empty: on every CPU model measured the own
// GEMM was as fast or faster, whichever kernels OpenBLAS ran there.
var openBLASFirstCPUs []string

// preferOwn reports whether the default is the own GEMM whatever else is
// installed: its path in use (ownPathName) is avx512 and the CPU model is
// not one of openBLASFirstCPUs.
func preferOwn(ownPath, model string) bool {
	return ownPath == "avx512" && !openBLASFirst(model)
}

// openBLASFirst reports whether model is one of openBLASFirstCPUs.
func openBLASFirst(model string) bool {
	for _, m := range openBLASFirstCPUs {
		if model != "" && model == m {
			return true
		}
	}
	return false
}

// CPUModel is the CPU's model name as the default BLAS is chosen by it:
// the first "model name" of /proc/cpuinfo, "" where there is none (not
// Linux). examples/benchmark's report names it beside its decision.
func CPUModel() string { return cpuModel() }

var cpuModel = sync.OnceValue(func() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
})
