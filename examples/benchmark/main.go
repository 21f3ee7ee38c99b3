// Benchmark runs the same workloads in this project and, when a python3
// with torch is found, in PyTorch, in one run, and prints and writes the
// tables the README's Performance section is made from (report.md, with
// benchmark.csv and friends, in -out).
//
//	go run ./examples/benchmark                # about 15 minutes on 2 cores
//	go run ./examples/benchmark -scaling       # plus step time vs tokens and vs width
//	go run ./examples/benchmark -quick         # tiny shapes, 1 round: a smoke test
//	go run ./examples/benchmark -workloads gpt # only the GPT training step
//
// Each side is run at every thread setting a user would try, and each
// workload is reported at its side's best setting, named:
//
//   - this project: GOMAXPROCS 1 and 2 and, for workloads with matrix
//     products, OpenBLAS 1 and 2 threads (OPENBLAS_NUM_THREADS);
//   - the own GEMM, what a machine without OpenBLAS uses (GELU_BLAS=own): GOMAXPROCS 1 and 2;
//   - PyTorch: 1 and 2 intra-op threads (torch.set_num_threads, with
//     OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to the
//     same number before torch is imported) and 1 inter-op thread.
//
// The thread counts are -threads (default 1,2). Each workload at each
// setting is timed as the median of -reps runs after 2 warm-up runs, for
// this project in a child process of its own (so its peak RSS is its own),
// for PyTorch in a python3 process per setting that serves workloads one by
// one. This is repeated for -rounds rounds, alternating the sides workload
// by workload, and each (workload, setting) keeps its best round: on a
// shared machine the least-disturbed round is the most repeatable figure.
// The workloads are listed in workloads.go.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
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
	only     []string // -workloads: families or workload names; nil: all
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
	threads, only := "1,2", ""
	flag.StringVar(&c.out, "out", "out/benchmark", "output folder for report.md, the tables' CSV files and summary.json")
	flag.IntVar(&c.reps, "reps", 7, "timed runs per workload, setting and round (their median is the round's figure)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds alternating this project and PyTorch; the best round of each is reported")
	flag.StringVar(&c.python, "python", "auto", `python3 with torch for the PyTorch side ("auto": python3, then /usr/bin/python3; "none": skip)`)
	flag.StringVar(&c.script, "script", "examples/benchmark/bench_torch.py", "the PyTorch side's script (the default is relative to the module root)")
	flag.StringVar(&threads, "threads", threads, "thread counts tried on both sides, comma-separated")
	flag.StringVar(&only, "workloads", "", "comma-separated families ("+familyNames()+": their workloads of this run) or full workload names such as gpt/L2-d128-h4-T64-B8/float32; empty: all")
	flag.BoolVar(&c.scaling, "scaling", false, "also measure the step and its GEMMs at 4 more token counts and 4 more widths (float32)")
	flag.BoolVar(&c.quick, "quick", false, "tiny shapes, -reps 1 -rounds 1 unless given: checks that everything runs")
	flag.BoolVar(&c.fallback, "fallback", true, "also run the workloads with matrix products on the own GEMM, what a machine without OpenBLAS uses (GELU_BLAS=own)")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.quick && !set["reps"] {
		c.reps = 1
	}
	if c.quick && !set["rounds"] {
		c.rounds = 1
	}
	if only != "" {
		c.only = strings.Split(only, ",")
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
	// Heap allocations and bytes allocated per step in the timed runs
	// (after the warm-up): steady state.
	Allocs     float64 `json:"allocs_per_step"`
	AllocBytes float64 `json:"alloc_bytes_per_step"`
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
// of the own GEMM (a machine without OpenBLAS) instead, nil when w has no matrix product.
func oursSettings(w workload, threads []int, pureGo bool) []setting {
	var s []setting
	for _, p := range threads {
		procs := "GOMAXPROCS=" + strconv.Itoa(p)
		switch {
		case pureGo && w.fam.blas:
			s = append(s, setting{procs, []string{procs, "GELU_BLAS=own"}})
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
	sidePureGo = "this project, no OpenBLAS (own GEMM)"
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

// hopeless is how many times slower than its side's best a setting must
// have been on a workload not to be run again in later rounds: PyTorch at 2
// threads on a loaded 2-core machine took 1.5 s per 4 ms MLP step (OpenMP
// threads spinning against each other), a quarter of an hour per round.
const hopeless = 5

// skip reports whether setting s of side has been over hopeless times
// slower than the side's best on w.
func (t tally) skip(side, w, s string) bool {
	r, ok := t[side][w][s]
	_, b, _ := t.best(side, w)
	return ok && r.Seconds > hopeless*b.Seconds
}

func run(c config, argv []string) error {
	if c.reps < 1 || c.rounds < 1 || len(c.threads) == 0 {
		return fmt.Errorf("-reps %d -rounds %d -threads %v: want reps and rounds ≥ 1 and a thread count", c.reps, c.rounds, c.threads)
	}
	names, err := selectWorkloads(workloadNames(c.scaling, c.quick), c.only)
	if err != nil {
		return err
	}
	var ws []workload
	for _, name := range names {
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
	var torch []*torchServer
	defer func() {
		for _, ts := range torch {
			ts.close()
		}
	}()
	if py != "" {
		for _, s := range torchSettings(c.threads) {
			ts, err := startTorch(py, c.script, c.reps, s)
			if err != nil {
				return err
			}
			torch = append(torch, ts)
		}
	}
	t := tally{}
	for round := 1; round <= c.rounds; round++ {
		for _, w := range ws {
			sides := map[string][]setting{sideOurs: oursSettings(w, c.threads, false)}
			if c.fallback {
				sides[sidePureGo] = oursSettings(w, c.threads, true)
			}
			for _, side := range []string{sideOurs, sidePureGo} {
				for _, s := range sides[side] {
					if t.skip(side, w.name, s.name) {
						continue
					}
					res, err := measure(w.name, c.reps, s.env)
					if err != nil {
						return err
					}
					t.add(side, w.name, s.name, res)
					progress(round, w, side, s.name, res.Seconds)
				}
			}
			for _, ts := range torch {
				if t.skip(sideTorch, w.name, ts.setting.name) {
					continue
				}
				sec, err := ts.time(w.name)
				if err != nil {
					return err
				}
				t.add(sideTorch, w.name, ts.setting.name, result{Seconds: sec})
				progress(round, w, sideTorch, ts.setting.name, sec)
			}
		}
	}
	var info torchInfo
	if len(torch) > 0 {
		info = torch[0].info
	}
	return writeReport(c, argv, ws, t, info, py)
}

// selectWorkloads keeps those of names that -workloads selects: an item
// with a "/" is a workload name, taken as given; any other item is a
// family, selecting its workloads in names. nil selects all names.
func selectWorkloads(names, only []string) ([]string, error) {
	if only == nil {
		return names, nil
	}
	var sel []string
	for _, item := range only {
		item = strings.TrimSpace(item)
		if strings.Contains(item, "/") {
			if !slices.Contains(sel, item) {
				sel = append(sel, item)
			}
			continue
		}
		if !slices.ContainsFunc(families, func(f family) bool { return f.name == item }) {
			return nil, fmt.Errorf("-workloads: %q is neither a family (want one of %s) nor a workload name <family>/<args>/<dtype>", item, familyNames())
		}
		for _, n := range names {
			if strings.HasPrefix(n, item+"/") && !slices.Contains(sel, n) {
				sel = append(sel, n)
			}
		}
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("-workloads %s: no workload of this run selected", strings.Join(only, ","))
	}
	return sel, nil
}

func familyNames() string {
	var s []string
	for _, f := range families {
		s = append(s, f.name)
	}
	return strings.Join(s, ", ")
}

func progress(round int, w workload, side, setting string, seconds float64) {
	fmt.Fprintf(os.Stderr, "round %d  %-28s %-26s %-28s %10.4g %s\n", round, w.name, side, setting, w.value(seconds), w.fam.unit)
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

// torchInfo is what bench_torch.py prints first.
type torchInfo struct {
	Torch   string `json:"torch"`
	BLAS    string `json:"blas"`
	CPU     string `json:"cpu_capability"`
	Threads int    `json:"threads"`
	Interop int    `json:"interop_threads"`
}

// torchServer is a bench_torch.py --serve process at one setting: it times
// the workloads it is sent one at a time, so that the run can alternate
// the sides workload by workload, with torch imported once per setting.
type torchServer struct {
	setting setting
	info    torchInfo
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
}

func startTorch(py, script string, reps int, s setting) (*torchServer, error) {
	threads := strings.TrimPrefix(s.env[0], "OMP_NUM_THREADS=")
	cmd := exec.Command(py, script, "--serve", "--reps", strconv.Itoa(reps), "--threads", threads)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", py, script, err)
	}
	ts := &torchServer{setting: s, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	if err := ts.read(&ts.info); err != nil {
		ts.close()
		return nil, err
	}
	if strconv.Itoa(ts.info.Threads) != threads {
		ts.close()
		return nil, fmt.Errorf("%s ran with %d threads, asked for %s", script, ts.info.Threads, threads)
	}
	return ts, nil
}

// read decodes the server's next line into v.
func (ts *torchServer) read(v any) error {
	if !ts.out.Scan() {
		return fmt.Errorf("bench_torch.py (%s) stopped: %v", ts.setting.name, ts.out.Err())
	}
	if err := json.Unmarshal(ts.out.Bytes(), v); err != nil {
		return fmt.Errorf("bench_torch.py (%s) printed %q: %w", ts.setting.name, ts.out.Text(), err)
	}
	return nil
}

// time returns PyTorch's seconds per step for workload w.
func (ts *torchServer) time(w string) (float64, error) {
	if _, err := fmt.Fprintln(ts.in, w); err != nil {
		return 0, fmt.Errorf("bench_torch.py (%s): %w", ts.setting.name, err)
	}
	var reply struct {
		Name    string  `json:"name"`
		Seconds float64 `json:"seconds"`
		Error   string  `json:"error"`
	}
	if err := ts.read(&reply); err != nil {
		return 0, err
	}
	if reply.Error != "" || reply.Name != w || reply.Seconds <= 0 {
		return 0, fmt.Errorf("bench_torch.py (%s) asked for %s answered %+v", ts.setting.name, w, reply)
	}
	return reply.Seconds, nil
}

// close ends the server: end of input makes it exit.
func (ts *torchServer) close() error {
	ts.in.Close()
	return ts.cmd.Wait()
}
