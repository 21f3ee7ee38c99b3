package bench

import (
	"slices"
	"strings"
	"testing"
)

func TestSettings(t *testing.T) {
	threads := []int{1, 2}
	ws, err := testFamilies.ParseAll([]string{"gelu/exact/float32", "ffn/8x4x16/float32", "matmul/8x4x16-NT/float32"})
	if err != nil {
		t.Fatal(err)
	}
	gelu, ffn, matmul := ws[0], ws[1], ws[2]
	own := BLAS{Name: "own GEMM"}
	openblas := BLAS{Name: "OpenBLAS", Env: []string{"GELU_BLAS=openblas"}, OpenBLAS: true}
	for _, c := range []struct {
		b    BLAS
		w    Workload
		want []string
	}{
		{openblas, ffn, []string{"GOMAXPROCS=1", "GOMAXPROCS=1, BLAS 1 thread", "GOMAXPROCS=1, BLAS 2 threads", "GOMAXPROCS=2", "GOMAXPROCS=2, BLAS 1 thread", "GOMAXPROCS=2, BLAS 2 threads"}},
		{openblas, matmul, []string{"GOMAXPROCS=1", "GOMAXPROCS=1, BLAS 1 thread", "GOMAXPROCS=2", "GOMAXPROCS=2, BLAS 2 threads"}},
		{openblas, gelu, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
		{own, ffn, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
		{own, matmul, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
	} {
		var got []string
		for _, s := range c.b.Settings(threads, c.w) {
			got = append(got, s.Name)
			if c.b.Env != nil && !slices.Contains(s.Env, c.b.Env[0]) {
				t.Errorf("%s on %s, %q: env %v lacks %s", c.w.Name, c.b.Name, s.Name, s.Env, c.b.Env[0])
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s on %s: settings %q, want %q", c.w.Name, c.b.Name, got, c.want)
		}
	}
	s := openblas.Settings([]int{2}, ffn)
	if len(s) != 2 || !slices.Equal(s[0].Env, []string{"GOMAXPROCS=2", "GELU_BLAS=openblas"}) || !slices.Equal(s[1].Env, []string{"GOMAXPROCS=2", "GELU_BLAS=openblas", "OPENBLAS_NUM_THREADS=2"}) {
		t.Errorf("OpenBLAS settings([2], ffn) = %+v", s)
	}
	// The default runs with no GELU_BLAS: only GOMAXPROCS (and OpenBLAS's threads).
	def := BLAS{Name: "OpenBLAS 0.3.21 Haswell", OpenBLAS: true}
	if s := def.Settings([]int{1}, ffn); len(s) != 2 || !slices.Equal(s[0].Env, []string{"GOMAXPROCS=1"}) || !slices.Equal(s[1].Env, []string{"GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1"}) {
		t.Errorf("default OpenBLAS settings([1], ffn) = %+v", s)
	}
	// PyTorch: as installed (nothing set), then its intra-op and BLAS
	// thread counts chosen independently, never through the environment
	// of the process (the script sets the BLAS's before import).
	ts := PeerSettings([]int{1, 2})
	var names []string
	for _, s := range ts {
		names = append(names, s.Name)
		if s.Env != nil {
			t.Errorf("peer setting %q has environment %q, want none", s.Name, s.Env)
		}
	}
	if want := []string{AsInstalled, "1 thread, BLAS 1 thread", "1 thread, BLAS 2 threads", "2 threads, BLAS 1 thread", "2 threads, BLAS 2 threads"}; !slices.Equal(names, want) ||
		ts[0].Threads != 0 || ts[0].BLASThreads != 0 || ts[2].Threads != 1 || ts[2].BLASThreads != 2 {
		t.Errorf("PeerSettings([1 2]) = %+v, want %q with their counts", ts, want)
	}
	// A setting's process inherits no thread count but the setting's.
	env := settingEnv([]string{"HOME=/h", "GOMAXPROCS=9", "OMP_NUM_THREADS=9", "OPENBLAS_NUM_THREADS=9", "GOTO_NUM_THREADS=9", "MKL_NUM_THREADS=9", "GELU_BLAS=own"}, Setting{Env: []string{"GOMAXPROCS=1"}})
	if !slices.Equal(env, []string{"HOME=/h", "GELU_BLAS=own", "GOMAXPROCS=1"}) {
		t.Errorf("settingEnv = %q", env)
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

// TestBLASChoices: the default is what gemm.Name reports; the other is
// OpenBLAS when the default is the own GEMM and OpenBLAS loads, none when
// it does not load, and the own GEMM when the default is anything else.
func TestBLASChoices(t *testing.T) {
	ownName := "own GEMM (AVX-512, 2 threads)"
	for _, c := range []struct {
		name       string
		openBLAS   bool
		def, other BLAS
		ok         bool
	}{
		{ownName, true, BLAS{Name: "own GEMM"}, BLAS{Name: "OpenBLAS", Env: []string{"GELU_BLAS=openblas"}, OpenBLAS: true}, true},
		{"own GEMM (AVX2+FMA, 1 thread); ops: OpenBLAS not loaded", false, BLAS{Name: "own GEMM"}, BLAS{}, false},
		{"OpenBLAS 0.3.21 SkylakeX (libopenblas.so.0, 2 threads)", true, BLAS{Name: "OpenBLAS 0.3.21 SkylakeX", OpenBLAS: true},
			BLAS{Name: "own GEMM", Env: []string{"GELU_BLAS=own"}}, true},
		{"gonum (pure Go); no OpenBLAS", false, BLAS{Name: "gonum"}, BLAS{Name: "own GEMM", Env: []string{"GELU_BLAS=own"}}, true},
	} {
		def, other, ok := blasChoices(c.name, c.openBLAS)
		if def.Name != c.def.Name || def.OpenBLAS != c.def.OpenBLAS || def.Env != nil || ok != c.ok ||
			other.Name != c.other.Name || other.OpenBLAS != c.other.OpenBLAS || !slices.Equal(other.Env, c.other.Env) {
			t.Errorf("blasChoices(%q, %v) = %+v, %+v, %v; want %+v, %+v, %v", c.name, c.openBLAS, def, other, ok, c.def, c.other, c.ok)
		}
	}
	for name, want := range map[string]int{"GOMAXPROCS=2": 2, "GOMAXPROCS=1, BLAS 2 threads": 2, "GOMAXPROCS=2, BLAS 1 thread": 1, "2 threads": 0} {
		if got := settingThreads(name); got != want {
			t.Errorf("settingThreads(%q) = %d, want %d", name, got, want)
		}
	}
}

// TestBLASSideCheck: a child that ran on another BLAS than its side's is
// an error naming both; the default's full name and the other BLAS's
// short name are accepted.
func TestBLASSideCheck(t *testing.T) {
	own := BLAS{Name: "own GEMM"}
	openblas := BLAS{Name: "OpenBLAS", Env: []string{"GELU_BLAS=openblas"}, OpenBLAS: true}
	s := Setting{Name: "GOMAXPROCS=2"}
	if err := own.check("ffn/8x4x16/float32", s, Result{BLAS: "own GEMM (AVX-512, 2 threads); GELU_GEMM_KERNEL=\"x\" unknown"}); err != nil {
		t.Error(err)
	}
	if err := openblas.check("ffn/8x4x16/float32", s, Result{BLAS: "OpenBLAS 0.3.21 Haswell (libopenblas.so.0, 1 thread)"}); err != nil {
		t.Error(err)
	}
	err := openblas.check("ffn/8x4x16/float32", s, Result{BLAS: "own GEMM (AVX-512, 2 threads); ops: OpenBLAS not loaded"})
	if err == nil || !strings.Contains(err.Error(), "want OpenBLAS") || !strings.Contains(err.Error(), "own GEMM") {
		t.Errorf("a child on the own GEMM for the OpenBLAS side: %v, want an error naming both", err)
	}
}
