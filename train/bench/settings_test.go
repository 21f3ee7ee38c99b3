package bench

import (
	"slices"
	"testing"
)

func TestSettings(t *testing.T) {
	threads := []int{1, 2}
	for _, c := range []struct {
		blas, ownGEMM bool
		want          []string
	}{
		{true, false, []string{"GOMAXPROCS=1, BLAS 1 thread", "GOMAXPROCS=1, BLAS 2 threads", "GOMAXPROCS=2, BLAS 1 thread", "GOMAXPROCS=2, BLAS 2 threads"}},
		{true, true, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
		{false, false, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
		{false, true, nil},
	} {
		var got []string
		for _, s := range OursSettings(threads, c.blas, c.ownGEMM) {
			got = append(got, s.Name)
			if c.ownGEMM && !slices.Contains(s.Env, "GELU_BLAS=own") {
				t.Errorf("blas=%v own GEMM %q: env %v lacks GELU_BLAS=own", c.blas, s.Name, s.Env)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("blas=%v ownGEMM=%v: settings %q, want %q", c.blas, c.ownGEMM, got, c.want)
		}
	}
	s := OursSettings([]int{2}, true, false)
	if len(s) != 1 || !slices.Equal(s[0].Env, []string{"GOMAXPROCS=2", "GELU_BLAS=openblas", "OPENBLAS_NUM_THREADS=2"}) {
		t.Errorf("OursSettings([2], blas) = %+v", s)
	}
	ts := PeerSettings([]int{2})
	if len(ts) != 1 || ts[0].Name != "2 threads" || ts[0].Threads != 2 || !slices.Equal(ts[0].Env, []string{"OMP_NUM_THREADS=2", "OPENBLAS_NUM_THREADS=2", "MKL_NUM_THREADS=2"}) {
		t.Errorf("PeerSettings([2]) = %+v", ts)
	}
	if got, err := ParseThreads(" 1,2"); err != nil || !slices.Equal(got, []int{1, 2}) {
		t.Errorf(`ParseThreads(" 1,2") = %v (%v), want [1 2]`, got, err)
	}
	for _, bad := range []string{"1,0", "", "1,x", "-1"} {
		if _, err := ParseThreads(bad); err == nil {
			t.Errorf("ParseThreads(%q): no error", bad)
		}
	}
}
