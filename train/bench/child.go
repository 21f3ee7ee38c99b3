package bench

// Running a workload in a child process of its own, so that its peak RSS
// and its allocations are its own: the parent starts its own executable
// with the workload named in the environment, the child times it and
// prints a Result as JSON.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/gemm"
)

// ChildEnv names the workload a child process runs (and ChildRepsEnv its
// repetitions): environment variables rather than flags, so that a test
// binary can serve as the child too.
const ChildEnv, ChildRepsEnv = "GELU_BENCHMARK_CHILD", "GELU_BENCHMARK_REPS"

// Warmup runs precede the timed ones in every child (and in the peer).
const Warmup = 2

// FastestReps is the least number of timed runs of a Fastest family's
// child, of which it reports the fastest.
const FastestReps = 100

// Result is one measurement: what a child prints.
type Result struct {
	Seconds float64 `json:"seconds"` // median per step
	PeakMB  float64 `json:"peak_rss_mb"`
	BLAS    string  `json:"blas"`
	// Heap allocations and bytes allocated per step in the timed runs
	// (after the warm-up): steady state.
	Allocs     float64 `json:"allocs_per_step"`
	AllocBytes float64 `json:"alloc_bytes_per_step"`
}

// Child runs the child's side when this process is a child (ChildEnv is
// set): it times the workload of fs named there, prints the Result on
// stdout, and returns the exit code and true. Programs call it first
// thing in main (and in TestMain, for the test binary):
//
//	if code, ok := bench.Child(families); ok {
//		os.Exit(code)
//	}
func Child(fs Families) (code int, ok bool) {
	name := os.Getenv(ChildEnv)
	if name == "" {
		return 0, false
	}
	reps, err := strconv.Atoi(os.Getenv(ChildRepsEnv))
	if err == nil && reps < 1 {
		err = fmt.Errorf("%s=%d, want ≥ 1", ChildRepsEnv, reps)
	}
	if err == nil {
		err = runChild(os.Stdout, fs, name, reps)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark child:", err)
		return 1, true
	}
	return 0, true
}

func runChild(out io.Writer, fs Families, name string, reps int) error {
	w, err := fs.Parse(name)
	if err != nil {
		return err
	}
	var run func() error
	var steps int
	if w.Autocast == graph.BFloat16 {
		run, steps, err = w.Family.BuildBF16(w.Args)
	} else {
		run, steps, err = w.Family.Build(w.Args, w.Dtype)
	}
	if err != nil {
		return fmt.Errorf("workload %s: %w", name, err)
	}
	pick := Median
	if w.Family.Fastest {
		pick, reps = slices.Min[[]float64], max(reps, FastestReps)
	}
	res, err := timeRuns(run, steps, reps, pick)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(res)
}

// Time times run, which makes steps training steps: the median over reps
// runs after Warmup runs, per step, with the heap allocations per step
// over the timed runs (the difference of runtime.MemStats.Mallocs and
// TotalAlloc, every goroutine of the process counted, divided by the
// steps), the process's peak RSS so far and the matrix-product backend.
func Time(run func() error, steps, reps int) (Result, error) {
	return timeRuns(run, steps, reps, Median)
}

// timeRuns is Time with pick choosing the figure among the timed runs'
// seconds per step (Median, or the fastest for a Fastest family).
func timeRuns(run func() error, steps, reps int, pick func([]float64) float64) (Result, error) {
	if steps < 1 || reps < 1 {
		return Result{}, fmt.Errorf("bench.Time: %d steps, %d reps, want both ≥ 1", steps, reps)
	}
	for range Warmup {
		if err := run(); err != nil {
			return Result{}, err
		}
	}
	times := make([]float64, reps)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range times {
		t0 := time.Now()
		if err := run(); err != nil {
			return Result{}, err
		}
		times[i] = time.Since(t0).Seconds() / float64(steps)
	}
	runtime.ReadMemStats(&after)
	n := float64(reps * steps)
	return Result{Seconds: pick(times), PeakMB: PeakRSS(), BLAS: gemm.Name(),
		Allocs: float64(after.Mallocs-before.Mallocs) / n, AllocBytes: float64(after.TotalAlloc-before.TotalAlloc) / n}, nil
}

// Median is the middle value of v, the upper one of the two middle values
// when len(v) is even (as the timings have always been taken); it sorts a
// copy. It is 0 for no values.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// Measure runs workload w in a child process (this executable, see Child)
// with reps timed runs and env added to its environment (which has none of
// the thread counts a setting may set but those of env).
func Measure(w string, reps int, env []string) (Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(settingEnv(os.Environ(), Setting{Env: env}), ChildEnv+"="+w, ChildRepsEnv+"="+strconv.Itoa(reps))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("workload %s (%s): %w", w, strings.Join(env, " "), err)
	}
	return decodeResult(w, out)
}

func decodeResult(w string, out []byte) (Result, error) {
	var res Result
	if err := json.Unmarshal(out, &res); err != nil || res.Seconds <= 0 {
		return Result{}, fmt.Errorf("workload %s: child printed %q, want JSON with seconds > 0", w, out)
	}
	return res, nil
}

// PeakRSS reads the process's peak resident set size (Linux), in MB; 0
// where /proc/self/status is not there.
func PeakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	return peakRSS(f)
}

func peakRSS(r io.Reader) float64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var kb float64
		if _, err := fmt.Sscanf(sc.Text(), "VmHWM: %f kB", &kb); err == nil {
			return kb / 1024
		}
	}
	return 0
}
