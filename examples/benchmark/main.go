// Benchmark runs the same workloads in this project and, when a python3
// with torch is found, in PyTorch, in one run, and prints and writes the
// table: workload, this project, PyTorch, ratio. It is the source of the
// README's Performance section.
//
//	go run ./examples/benchmark                # about 2 minutes
//	go run ./examples/benchmark -scaling       # plus step time vs tokens and vs width
//
// Each workload is timed as the median of -reps runs after 2 warm-up runs,
// in a child process of its own (so its peak RSS is its own). This is
// repeated for -rounds rounds that alternate between this project and
// PyTorch, and each side's best round is reported: on a shared machine the
// least-disturbed round is the most repeatable figure. Workloads:
//
//	gelu/<exact|tanh>/<dtype>       GELU forward + backward on 4M elements (Melem/s)
//	ffn/<tokens>x<d>x<dff>/<dtype>  a training step of the pre-LN feed-forward block:
//	                                LayerNorm → Linear → GELU → Linear + residual, MSE, SGD-momentum (ms)
//	gemm/<tokens>x<d>x<dff>/float32 the step's six matrix products alone: the matmul-only bound (ms)
//
// With -fallback (default on) every workload also runs on the pure-Go BLAS
// (GELU_BLAS=gonum). Machines are noisy: compare ratios from one run.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/geluproject/gelu/train/report"
)

type config struct {
	out      string
	reps     int
	rounds   int
	python   string
	scaling  bool
	fallback bool
}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "out/benchmark", "output folder for benchmark.csv, summary.json and report.md")
	flag.IntVar(&c.reps, "reps", 7, "timed runs per workload and round (their median is the round's figure)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds alternating this project and PyTorch; the best round of each is reported")
	flag.StringVar(&c.python, "python", "auto", `python3 with torch for the PyTorch side ("auto": python3, then /usr/bin/python3; "none": skip)`)
	flag.BoolVar(&c.scaling, "scaling", false, "also measure the step at 4 more token counts and 4 more widths, with the matmul-only bound")
	flag.BoolVar(&c.fallback, "fallback", true, "also run every workload on the pure-Go BLAS (GELU_BLAS=gonum)")
	child := flag.String("child", "", "internal: run one workload and print its result as JSON")
	flag.Parse()
	if *child != "" {
		if err := runChild(*child, c.reps); err != nil {
			fmt.Fprintln(os.Stderr, "benchmark:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		os.Exit(1)
	}
}

// result is what a child prints.
type result struct {
	Seconds float64 `json:"seconds"` // median per run
	PeakMB  float64 `json:"peak_rss_mb"`
	BLAS    string  `json:"blas"`
}

func run(c config) error {
	if c.reps < 1 || c.rounds < 1 {
		return fmt.Errorf("-reps %d -rounds %d: want both ≥ 1", c.reps, c.rounds)
	}
	names := workloads(c.scaling)
	r, err := report.New(c.out, "Benchmark: this project and PyTorch, side by side", report.WithCommand(os.Args...))
	if err != nil {
		return err
	}
	ours, fallback, torch := map[string]result{}, map[string]result{}, map[string]float64{}
	torchVersion := "(not run)"
	best := func(m map[string]result, w string, res result) {
		if old, ok := m[w]; !ok || res.Seconds < old.Seconds {
			m[w] = res
		}
	}
	for round := 1; round <= c.rounds; round++ {
		for _, w := range names {
			res, err := measure(w, c.reps, "")
			if err != nil {
				return err
			}
			best(ours, w, res)
			fmt.Fprintf(os.Stderr, "round %d  %-30s %10.4g %s\n", round, w, value(w, res.Seconds), unit(w))
			if c.fallback {
				if res, err = measure(w, c.reps, "gonum"); err != nil {
					return err
				}
				best(fallback, w, res)
			}
		}
		times, version, err := pytorch(c)
		if err != nil {
			return err
		}
		torchVersion = version
		for w, s := range times {
			if old, ok := torch[w]; !ok || s < old {
				torch[w] = s
			}
		}
	}
	var rows [][]any
	for _, w := range names {
		o := ours[w]
		row := []any{w, unit(w), value(w, o.Seconds)}
		if c.fallback {
			row = append(row, value(w, fallback[w].Seconds))
		}
		ts, ok := torch[w]
		row = append(row, optional(ok, value(w, ts)), optional(ok, ts/o.Seconds), o.PeakMB)
		rows = append(rows, row)
		key := strings.NewReplacer("/", ".").Replace(w)
		r.Set(key+".ours", value(w, o.Seconds))
		r.Set(key+".peak_rss_mb", o.PeakMB)
		if c.fallback {
			r.Set(key+".pure_go", value(w, fallback[w].Seconds))
		}
		if ok {
			r.Set(key+".pytorch", value(w, ts))
			r.Set(key+".speedup_vs_pytorch", ts/o.Seconds)
		}
	}
	header := []string{"workload", "unit", "this project (" + ours[names[0]].BLAS + ")"}
	if c.fallback {
		header = append(header, "this project, pure Go")
	}
	header = append(header, "PyTorch "+torchVersion, "speedup vs PyTorch", "peak RSS MB")
	r.Text(fmt.Sprintf("Best of %d rounds alternating the two sides; each round's figure is the median of %d runs after 2 warm-up runs. "+
		"2 threads on both sides. Speedup = PyTorch time / this project's time (> 1: this project is faster). "+
		"Throughputs in Melem/s (GELU forward + backward on 4M elements), step times in ms.", c.rounds, c.reps))
	r.Table("benchmark", header, rows)
	r.Describe("*.ours", "this project's result (Melem/s for gelu, ms otherwise), best round")
	r.Describe("*.pure_go", "the same with GELU_BLAS=gonum (pure-Go BLAS)")
	r.Describe("*.pytorch", "PyTorch's result in the same unit, best round")
	r.Describe("*.speedup_vs_pytorch", "PyTorch time / this project's time")
	r.Describe("*.peak_rss_mb", "peak resident memory of the child process that ran the workload")
	return r.Close()
}

// workloads lists the workload names; see the package comment.
func workloads(scaling bool) []string {
	var w []string
	for _, dt := range []string{"float32", "float64"} {
		w = append(w, "gelu/exact/"+dt, "gelu/tanh/"+dt)
	}
	shapes := []string{"512x256x1024", "256x768x3072"}
	for _, s := range shapes {
		w = append(w, "ffn/"+s+"/float32", "ffn/"+s+"/float64")
	}
	if scaling {
		for _, n := range []int{64, 128, 256, 512, 1024} {
			s := fmt.Sprintf("%dx768x3072", n)
			if n != 256 {
				w = append(w, "ffn/"+s+"/float32")
			}
			w = append(w, "gemm/"+s+"/float32")
		}
		for _, d := range []int{128, 256, 512, 768, 1024} {
			s := fmt.Sprintf("256x%dx%d", d, 4*d)
			if d != 768 {
				w = append(w, "ffn/"+s+"/float32")
				w = append(w, "gemm/"+s+"/float32")
			}
		}
	}
	return w
}

func unit(w string) string {
	if strings.HasPrefix(w, "gelu/") {
		return "Melem/s"
	}
	return "ms"
}

// value converts seconds per run to the workload's unit.
func value(w string, s float64) float64 {
	if strings.HasPrefix(w, "gelu/") {
		return float64(geluN) / s / 1e6
	}
	return s * 1e3
}

func optional(ok bool, v float64) any {
	if !ok {
		return "—"
	}
	return v
}

// measure runs workload w in a child process; blas "gonum" forces pure Go.
func measure(w string, reps int, blas string) (result, error) {
	exe, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(exe, "-child", w, "-reps", fmt.Sprint(reps))
	cmd.Env = os.Environ()
	if blas != "" {
		cmd.Env = append(cmd.Env, "GELU_BLAS="+blas)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("workload %s: %w", w, err)
	}
	var res result
	if err := json.Unmarshal(out, &res); err != nil {
		return result{}, fmt.Errorf("workload %s: bad child output %q", w, out)
	}
	return res, nil
}

// pytorch runs bench_torch.py once and returns its times by workload.
func pytorch(c config) (map[string]float64, string, error) {
	if c.python == "none" {
		return nil, "(skipped)", nil
	}
	candidates := []string{c.python}
	if c.python == "auto" {
		candidates = []string{"python3", "/usr/bin/python3"}
	}
	for _, py := range candidates {
		if exec.Command(py, "-c", "import torch").Run() != nil {
			continue
		}
		args := []string{"examples/benchmark/bench_torch.py", "--reps", fmt.Sprint(c.reps), "--threads", "2"}
		if c.scaling {
			args = append(args, "--scaling")
		}
		out, err := exec.Command(py, args...).Output()
		if err != nil {
			return nil, "", fmt.Errorf("bench_torch.py: %w (run from the module root)", err)
		}
		var res struct {
			Torch string             `json:"torch"`
			Times map[string]float64 `json:"times"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, "", fmt.Errorf("bench_torch.py output: %w", err)
		}
		return res.Times, res.Torch, nil
	}
	fmt.Fprintln(os.Stderr, "PyTorch side skipped: no python3 with torch (Debian: apt-get install python3-torch)")
	return nil, "(not found)", nil
}
