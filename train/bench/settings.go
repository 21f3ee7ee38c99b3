package bench

// The settings sweep: each side is run at every thread setting a user
// would try, applied through the environment of the process that runs the
// workload.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/geluproject/gelu/ops/gemm"
)

// Setting is one configuration of a side: a name for the tables and the
// environment variables that make it. The process that runs it gets the
// parent's environment without the thread counts a setting may set
// (threadVars), then Env: a variable a setting does not set is unset.
type Setting struct {
	Name string
	Env  []string
	// Threads and BLASThreads are the peer's intra-op and BLAS thread
	// counts (PeerSettings), 0 where the peer is left as installed; both 0
	// for this project's settings (BLAS.Settings).
	Threads, BLASThreads int
}

// threadVars are the thread counts a setting may set, for this project
// (GOMAXPROCS and OpenBLAS's) or the peer (OpenMP's, OpenBLAS's, MKL's):
// removed from the environment a side's process inherits, so that a
// setting is exactly what its name says whatever the shell had set.
var threadVars = []string{"GOMAXPROCS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS"}

// settingEnv is env without threadVars, plus s's variables.
func settingEnv(env []string, s Setting) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(threadVars, name)
	})
	return append(env, s.Env...)
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

// BLAS is one of this project's matrix-product backends as a side runs
// it: the machine's default (what a user gets, no GELU_BLAS set) or
// another one forced through GELU_BLAS.
type BLAS struct {
	// Name is how the tables name it: "own GEMM", "OpenBLAS", "gonum".
	Name string
	// Env selects it in a child: nil for the default, else GELU_BLAS=….
	Env []string
	// OpenBLAS: it runs on threads of its own (OPENBLAS_NUM_THREADS),
	// swept along with GOMAXPROCS.
	OpenBLAS bool
}

// MachineBLAS returns the default BLAS of this process's machine and
// environment (gemm.Name) and the other one worth comparing it with, if
// any: OpenBLAS where the default is the own GEMM and OpenBLAS loads, the
// own GEMM where the default is anything else. It is decided once per
// process: a library installed or removed during a run does not change
// the answer, and a child that then runs on another BLAS than its side's
// is an error (BLAS.Side), not a mislabelled column.
func MachineBLAS() (def BLAS, other BLAS, ok bool) {
	c := machineBLAS()
	return c.def, c.other, c.ok
}

type blasChoice struct {
	def, other BLAS
	ok         bool
}

var machineBLAS = sync.OnceValue(func() blasChoice {
	_, err := gemm.LoadOpenBLAS("")
	def, other, ok := blasChoices(gemm.Name(), err == nil)
	return blasChoice{def, other, ok}
})

// blasChoices is MachineBLAS for the default BLAS named name (gemm.Name)
// and whether OpenBLAS loads.
func blasChoices(name string, openBLAS bool) (def BLAS, other BLAS, ok bool) {
	def = BLAS{Name: ShortBLAS(name), OpenBLAS: strings.HasPrefix(name, "OpenBLAS")}
	switch {
	case !strings.HasPrefix(name, "own GEMM"):
		return def, BLAS{Name: "own GEMM", Env: []string{"GELU_BLAS=own"}}, true
	case openBLAS:
		return def, BLAS{Name: "OpenBLAS", Env: []string{"GELU_BLAS=openblas"}, OpenBLAS: true}, true
	}
	return def, BLAS{}, false
}

// Side is a side of this project on b (ChildSide): each workload at each
// of settings(w) in a child process, which must report that it ran on b
// (its gemm.Name starting with b.Name). A child on another BLAS (the
// library installed or removed during the run, say) is an error naming
// both.
func (b BLAS) Side(name string, reps int, settings func(w Workload) []Setting) Side {
	s := ChildSide(name, reps, settings)
	measure := s.Measure
	s.Measure = func(w Workload, set Setting) (Result, error) {
		r, err := measure(w, set)
		if err == nil {
			err = b.check(w.Name, set, r)
		}
		return r, err
	}
	return s
}

// check reports an error when result r of workload w at setting s did not
// run on b.
func (b BLAS) check(w string, s Setting, r Result) error {
	if b.Name == "" || strings.HasPrefix(ShortBLAS(r.BLAS), b.Name) {
		return nil
	}
	return fmt.Errorf("workload %s (%s) ran on %q, want %s: did the machine's BLAS change during the run?", w, s.Name, r.BLAS, b.Name)
}

// ShortBLAS is a BLAS name of gemm.Name without what follows it in
// parentheses or after a semicolon: "own GEMM", "OpenBLAS 0.3.21 Haswell",
// "gonum".
func ShortBLAS(name string) string {
	name, _, _ = strings.Cut(name, ";")
	name, _, _ = strings.Cut(name, " (")
	return strings.TrimSpace(name)
}

// Settings are b's settings for workload w: GOMAXPROCS over threads and,
// for a workload with matrix products on OpenBLAS, both owners of the
// cores (ops/gemm): OpenBLAS on one thread with the products split over
// the workers (nothing more set, the default: "GOMAXPROCS=p"), and
// OpenBLAS on threads of its own, OPENBLAS_NUM_THREADS over threads too,
// every pair, or the same count as GOMAXPROCS for a family of lone
// products (Family.Paired): "GOMAXPROCS=p, BLAS t threads".
func (b BLAS) Settings(threads []int, w Workload) []Setting {
	var s []Setting
	for _, p := range threads {
		procs := "GOMAXPROCS=" + strconv.Itoa(p)
		env := append([]string{procs}, b.Env...)
		s = append(s, Setting{Name: procs, Env: env})
		if !w.Family.BLAS || !b.OpenBLAS {
			continue
		}
		for _, t := range threads {
			if w.Family.Paired && t != p {
				continue
			}
			s = append(s, Setting{Name: procs + ", BLAS " + plural(t, "thread"), Env: append(env[:len(env):len(env)], "OPENBLAS_NUM_THREADS="+strconv.Itoa(t))})
		}
	}
	return s
}

// settingThreads is the thread count a product ran on at the setting
// named s: OpenBLAS's ("BLAS <n> thread[s]") if named, else GOMAXPROCS;
// 0 if s names neither.
func settingThreads(s string) int {
	var n int
	if _, after, ok := strings.Cut(s, "BLAS "); ok {
		if _, err := fmt.Sscanf(after, "%d", &n); err == nil {
			return n
		}
	}
	if _, after, ok := strings.Cut(s, "GOMAXPROCS="); ok {
		if _, err := fmt.Sscanf(after, "%d", &n); err == nil {
			return n
		}
	}
	return 0
}

// AsInstalled names the peer's setting with nothing set: the framework
// as a user gets it. StartPeer adds what that turned out to be, e.g.
// "as installed (1 thread, BLAS 2 threads)".
const AsInstalled = "as installed"

// PeerSettings are PyTorch's: first as installed (nothing set in the
// environment, no thread call), then every pair of an intra-op thread
// count (torch.set_num_threads) and a BLAS thread count
// (OPENBLAS_NUM_THREADS and MKL_NUM_THREADS, set by the script before
// torch is imported) over threads, chosen independently: PyTorch as
// installed runs its matrix products on OpenBLAS's threads, not its own
// intra-op count, and pinning one to the other would never run it so.
func PeerSettings(threads []int) []Setting {
	s := []Setting{{Name: AsInstalled}}
	for _, t := range threads {
		for _, b := range threads {
			s = append(s, Setting{Name: plural(t, "thread") + ", BLAS " + plural(b, "thread"), Threads: t, BLASThreads: b})
		}
	}
	return s
}
