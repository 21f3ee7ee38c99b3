package bench

// The settings sweep: each side is run at every thread setting a user
// would try, applied through the environment of the process that runs the
// workload.

import (
	"fmt"
	"strconv"
	"strings"
)

// Setting is one configuration of a side: a name for the tables and the
// environment variables that make it.
type Setting struct {
	Name string
	Env  []string
	// Threads is the peer's thread count (PeerSettings); 0 for this
	// project's settings.
	Threads int
}

// ParseThreads reads the -threads flag: positive integers separated by
// commas.
func ParseThreads(s string) ([]int, error) {
	var ts []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-threads %q: want positive integers separated by commas, found %q", s, f)
		}
		ts = append(ts, n)
	}
	return ts, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// OursSettings are this project's settings for a workload: GOMAXPROCS
// over threads, and the OpenBLAS thread count over threads too when blas
// (the workload runs matrix products; GELU_BLAS=openblas, which the
// default may not be: see gemm.Name). ownGEMM gives those of the own GEMM
// (GELU_BLAS=own, what a machine without OpenBLAS uses) instead, nil when
// the workload has no matrix product.
func OursSettings(threads []int, blas, ownGEMM bool) []Setting {
	var s []Setting
	for _, p := range threads {
		procs := "GOMAXPROCS=" + strconv.Itoa(p)
		switch {
		case ownGEMM && blas:
			s = append(s, Setting{Name: procs, Env: []string{procs, "GELU_BLAS=own"}})
		case ownGEMM:
		case !blas:
			s = append(s, Setting{Name: procs, Env: []string{procs}})
		default:
			for _, t := range threads {
				s = append(s, Setting{Name: procs + ", BLAS " + plural(t, "thread"), Env: []string{procs, "GELU_BLAS=openblas", "OPENBLAS_NUM_THREADS=" + strconv.Itoa(t)}})
			}
		}
	}
	return s
}

// PeerSettings are PyTorch's: the thread count, set everywhere PyTorch
// and its libraries read one.
func PeerSettings(threads []int) []Setting {
	var s []Setting
	for _, t := range threads {
		n := strconv.Itoa(t)
		s = append(s, Setting{Name: plural(t, "thread"), Env: []string{"OMP_NUM_THREADS=" + n, "OPENBLAS_NUM_THREADS=" + n, "MKL_NUM_THREADS=" + n}, Threads: t})
	}
	return s
}
