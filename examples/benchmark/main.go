// Benchmark runs the same workloads in this project and, when a python3
// with torch is found, in PyTorch, in one run, and prints and writes the
// tables the README's Performance section is made from (report.md, with
// benchmark.csv and friends, in -out).
//
//	go run ./examples/benchmark                # about 10 minutes
//	go run ./examples/benchmark -scaling       # plus step time vs tokens and vs width
//	go run ./examples/benchmark -quick         # tiny shapes, 1 round: a smoke test
//
// Each side is run at every thread setting a user would try, and each
// workload is reported at its side's best setting, named:
//
//   - this project: GOMAXPROCS 1 and 2 and, for workloads with matrix
//     products, OpenBLAS 1 and 2 threads (OPENBLAS_NUM_THREADS);
//   - the pure-Go BLAS (GELU_BLAS=gonum): GOMAXPROCS 1 and 2;
//   - PyTorch: 1 and 2 intra-op threads (torch.set_num_threads, with
//     OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to the
//     same number before torch is imported) and 1 inter-op thread.
//
// The thread counts are -threads (default 1,2). Each workload at each
// setting is timed as the median of -reps runs after 2 warm-up runs, in a
// child process of its own for this project (so its peak RSS is its own)
// and in one python3 process per setting for PyTorch. This is repeated for
// -rounds rounds alternating the two sides, and each (workload, setting)
// keeps its best round: on a shared machine the least-disturbed round is
// the most repeatable figure. The workloads are listed in workloads.go.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

type config struct {
	out      string
	reps     int
	rounds   int
	python   string
	script   string
	threads  []int
	scaling  bool
	quick    bool
	fallback bool
}

// childEnv names the workload a child process runs (and childReps its
// repetitions): environment variables rather than flags, so that the test
// binary can serve as the child too.
const childEnv, childRepsEnv = "GELU_BENCHMARK_CHILD", "GELU_BENCHMARK_REPS"

func main() {
	if w := os.Getenv(childEnv); w != "" {
		os.Exit(childMain(w))
	}
	var c config
	threads := "1,2"
	flag.StringVar(&c.out, "out", "out/benchmark", "output folder for report.md, the tables' CSV files and summary.json")
	flag.IntVar(&c.reps, "reps", 7, "timed runs per workload, setting and round (their median is the round's figure)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds alternating this project and PyTorch; the best round of each is reported")
	flag.StringVar(&c.python, "python", "auto", `python3 with torch for the PyTorch side ("auto": python3, then /usr/bin/python3; "none": skip)`)
	flag.StringVar(&c.script, "script", "examples/benchmark/bench_torch.py", "the PyTorch side's script (the default is relative to the module root)")
	flag.StringVar(&threads, "threads", threads, "thread counts tried on both sides, comma-separated")
	flag.BoolVar(&c.scaling, "scaling", false, "also measure the step and its GEMMs at 4 more token counts and 4 more widths (float32)")
	flag.BoolVar(&c.quick, "quick", false, "tiny shapes, -reps 1 -rounds 1 unless given: checks that everything runs")
	flag.BoolVar(&c.fallback, "fallback", true, "also run the workloads with matrix products on the pure-Go BLAS (GELU_BLAS=gonum)")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.quick && !set["reps"] {
		c.reps = 1
	}
	if c.quick && !set["rounds"] {
		c.rounds = 1
	}
	var err error
	if c.threads, err = parseThreads(threads); err == nil {
		err = run(c, os.Args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		os.Exit(1)
	}
}

// childMain runs in the child process; see measure.
func childMain(w string) int {
	reps, err := strconv.Atoi(os.Getenv(childRepsEnv))
	if err == nil && reps < 1 {
		err = fmt.Errorf("%s=%d, want ≥ 1", childRepsEnv, reps)
	}
	if err == nil {
		err = runChild(w, reps)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark child:", err)
		return 1
	}
	return 0
}

func parseThreads(s string) ([]int, error) {
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

// result is one measurement: what a child prints.
type result struct {
	Seconds float64 `json:"seconds"` // median per step
	PeakMB  float64 `json:"peak_rss_mb"`
	BLAS    string  `json:"blas"`
}

// setting is one configuration of a side, applied through the environment
// of the process that runs the workload.
type setting struct {
	name string
	env  []string
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// oursSettings are this project's settings for w: GOMAXPROCS, and the
// OpenBLAS thread count when w runs matrix products. pureGo gives those
// of the pure-Go BLAS instead, nil when w has no matrix product.
func oursSettings(w workload, threads []int, pureGo bool) []setting {
	var s []setting
	for _, p := range threads {
		procs := "GOMAXPROCS=" + strconv.Itoa(p)
		switch {
		case pureGo && w.fam.blas:
			s = append(s, setting{procs, []string{procs, "GELU_BLAS=gonum"}})
		case pureGo:
		case !w.fam.blas:
			s = append(s, setting{procs, []string{procs}})
		default:
			for _, t := range threads {
				s = append(s, setting{procs + ", BLAS " + plural(t, "thread"), []string{procs, "OPENBLAS_NUM_THREADS=" + strconv.Itoa(t)}})
			}
		}
	}
	return s
}

// torchSettings are PyTorch's: the thread count, set everywhere PyTorch
// and its libraries read one.
func torchSettings(threads []int) []setting {
	var s []setting
	for _, t := range threads {
		n := strconv.Itoa(t)
		s = append(s, setting{plural(t, "thread"), []string{"OMP_NUM_THREADS=" + n, "OPENBLAS_NUM_THREADS=" + n, "MKL_NUM_THREADS=" + n}})
	}
	return s
}

// Sides, as named in the tables.
const (
	sideOurs   = "this project"
	sidePureGo = "this project, pure-Go BLAS"
	sideTorch  = "PyTorch"
)

// tally keeps, per side, workload and setting, the best round.
type tally map[string]map[string]map[string]result

func (t tally) add(side, w, s string, r result) {
	if t[side] == nil {
		t[side] = map[string]map[string]result{}
	}
	if t[side][w] == nil {
		t[side][w] = map[string]result{}
	}
	if old, ok := t[side][w][s]; !ok || r.Seconds < old.Seconds {
		t[side][w][s] = r
	}
}

// best returns the best setting of side for w and its result.
func (t tally) best(side, w string) (string, result, bool) {
	var name string
	var res result
	for s, r := range t[side][w] {
		if name == "" || r.Seconds < res.Seconds || (r.Seconds == res.Seconds && s < name) {
			name, res = s, r
		}
	}
	return name, res, name != ""
}

func run(c config, argv []string) error {
	if c.reps < 1 || c.rounds < 1 || len(c.threads) == 0 {
		return fmt.Errorf("-reps %d -rounds %d -threads %v: want reps and rounds ≥ 1 and a thread count", c.reps, c.rounds, c.threads)
	}
	var ws []workload
	for _, name := range workloadNames(c.scaling, c.quick) {
		w, err := parseWorkload(name)
		if err != nil {
			return err
		}
		ws = append(ws, w)
	}
	py, err := findPython(c.python)
	if err != nil {
		return err
	}
	if _, err := os.Stat(c.script); py != "" && err != nil {
		return fmt.Errorf("the PyTorch side's script: %w (run from the module root or give -script)", err)
	}
	t := tally{}
	var torch torchInfo
	for round := 1; round <= c.rounds; round++ {
		for _, w := range ws {
			sides := map[string][]setting{sideOurs: oursSettings(w, c.threads, false)}
			if c.fallback {
				sides[sidePureGo] = oursSettings(w, c.threads, true)
			}
			for _, side := range []string{sideOurs, sidePureGo} {
				for _, s := range sides[side] {
					res, err := measure(w.name, c.reps, s.env)
					if err != nil {
						return err
					}
					t.add(side, w.name, s.name, res)
					fmt.Fprintf(os.Stderr, "round %d  %-28s %-26s %-28s %10.4g %s\n", round, w.name, side, s.name, w.value(res.Seconds), w.fam.unit)
				}
			}
		}
		if py == "" {
			continue
		}
		for _, s := range torchSettings(c.threads) {
			info, err := pytorch(py, c.script, ws, c.reps, s)
			if err != nil {
				return err
			}
			torch = info
			for name, sec := range info.Times {
				t.add(sideTorch, name, s.name, result{Seconds: sec})
			}
			fmt.Fprintf(os.Stderr, "round %d  PyTorch, %s: done\n", round, s.name)
		}
	}
	return writeReport(c, argv, ws, t, torch, py)
}

// measure runs workload w in a child process with env added to its
// environment.
func measure(w string, reps int, env []string) (result, error) {
	exe, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+w, childRepsEnv+"="+strconv.Itoa(reps))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("workload %s (%s): %w", w, strings.Join(env, " "), err)
	}
	var res result
	if err := json.Unmarshal(out, &res); err != nil || res.Seconds <= 0 {
		return result{}, fmt.Errorf("workload %s: child printed %q, want JSON with seconds > 0", w, out)
	}
	return res, nil
}

// findPython returns the python3 with torch to use, or "" (with a message)
// when there is none.
func findPython(choice string) (string, error) {
	if choice == "none" {
		return "", nil
	}
	candidates := []string{choice}
	if choice == "auto" {
		candidates = []string{"python3", "/usr/bin/python3"}
	}
	for _, py := range candidates {
		if exec.Command(py, "-c", "import torch").Run() == nil {
			return py, nil
		}
	}
	if choice != "auto" {
		return "", fmt.Errorf("-python %s: cannot import torch", choice)
	}
	fmt.Fprintln(os.Stderr, "PyTorch side skipped: no python3 with torch (Debian: apt-get install python3-torch)")
	return "", nil
}

// torchInfo is what bench_torch.py prints.
type torchInfo struct {
	Torch   string             `json:"torch"`
	BLAS    string             `json:"blas"`
	CPU     string             `json:"cpu_capability"`
	Threads int                `json:"threads"`
	Interop int                `json:"interop_threads"`
	Times   map[string]float64 `json:"times"` // seconds per step
}

// pytorch runs every workload once in bench_torch.py at setting s.
func pytorch(py, script string, ws []workload, reps int, s setting) (torchInfo, error) {
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.name
	}
	threads := strings.TrimPrefix(s.env[0], "OMP_NUM_THREADS=")
	cmd := exec.Command(py, script, "--reps", strconv.Itoa(reps), "--threads", threads, "--workloads", strings.Join(names, ","))
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return torchInfo{}, fmt.Errorf("%s %s: %w", py, script, err)
	}
	var info torchInfo
	if err := json.Unmarshal(out, &info); err != nil {
		return torchInfo{}, fmt.Errorf("%s output: %w", script, err)
	}
	if strconv.Itoa(info.Threads) != threads {
		return torchInfo{}, fmt.Errorf("%s ran with %d threads, asked for %s", script, info.Threads, threads)
	}
	for _, n := range names {
		if info.Times[n] <= 0 {
			return torchInfo{}, fmt.Errorf("%s gave no time for %s", script, n)
		}
	}
	return info, nil
}
