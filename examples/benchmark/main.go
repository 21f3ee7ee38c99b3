// Benchmark runs the same workloads in this project and, when a python3
// with torch is found, in PyTorch, in one run, and prints and writes the
// tables the README's Performance section is made from (report.md, with
// benchmark.csv and friends, in -out).
//
//	go run ./examples/benchmark                # half an hour or more on 2 cores
//	go run ./examples/benchmark -scaling       # plus step time vs tokens and vs width
//	go run ./examples/benchmark -quick         # tiny shapes, 1 round: a smoke test
//	go run ./examples/benchmark -workloads gpt # only the GPT training step
//
// Each side is run at every thread setting a user would try, and each
// workload is reported at its side's best setting, named:
//
//   - this project on the machine's default BLAS (gemm.Name: what a user
//     gets, no GELU_BLAS set; the own GEMM wherever its AVX-512 kernels
//     run): GOMAXPROCS 1 and 2 and, on OpenBLAS, both owners of the cores
//     (OpenBLAS on one thread with the products split over the workers,
//     nothing set; or OPENBLAS_NUM_THREADS 1 and 2, its own threads);
//   - this project on the other BLAS, for workloads with matrix products
//     (-fallback): OpenBLAS (GELU_BLAS=openblas) where the default is the
//     own GEMM, else the own GEMM (GELU_BLAS=own), settings likewise;
//   - PyTorch as installed (nothing set in the environment, no thread
//     call), and at every pair of 1 and 2 intra-op threads
//     (torch.set_num_threads) and 1 and 2 BLAS threads
//     (OPENBLAS_NUM_THREADS, MKL_NUM_THREADS), chosen independently.
//
// No process inherits a thread count from the shell: each gets exactly
// its setting's.
// A lone matrix product (matmul) on OpenBLAS's own threads runs with
// GOMAXPROCS and their count equal. PyTorch does not run the matmul and peak workloads.
// The thread counts are -threads (default 1,2). Each workload at each
// setting is timed as the median of -reps runs after 2 warm-up runs, for
// this project in a child process of its own (so its peak RSS is its own),
// for PyTorch in a python3 process per setting that serves workloads one by
// one. This is repeated for -rounds rounds, alternating the sides workload
// by workload, and each (workload, setting) keeps its best round: on a
// shared machine the least-disturbed round is the most repeatable figure.
// The workloads are listed in workloads.go; the machinery (settings, child
// processes, the PyTorch peer, best of rounds, the tables) is train/bench.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/geluproject/gelu/train/bench"
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

func main() {
	if code, ok := bench.Child(families); ok {
		os.Exit(code)
	}
	var c config
	threads, only := "1,2", ""
	flag.StringVar(&c.out, "out", "out/benchmark", "output folder for report.md, the tables' CSV files and summary.json")
	flag.IntVar(&c.reps, "reps", 7, "timed runs per workload, setting and round (their median is the round's figure)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds alternating this project and PyTorch; the best round of each is reported")
	flag.StringVar(&c.python, "python", "auto", `python3 with torch for the PyTorch side ("auto": python3, then /usr/bin/python3; "none": skip)`)
	flag.StringVar(&c.script, "script", "examples/benchmark/bench_torch.py", "the PyTorch side's script (the default is relative to the module root)")
	flag.StringVar(&threads, "threads", threads, "thread counts tried on both sides, comma-separated")
	flag.StringVar(&only, "workloads", "", "comma-separated families ("+families.Names()+": their workloads of this run) or full workload names such as gpt/L2-d128-h4-T64-B8/float32; empty: all")
	flag.BoolVar(&c.scaling, "scaling", false, "also measure the step and its GEMMs at 4 more token counts and 4 more widths (float32)")
	flag.BoolVar(&c.quick, "quick", false, "tiny shapes, -reps 1 -rounds 1 unless given: checks that everything runs")
	flag.BoolVar(&c.fallback, "fallback", true, "also run the workloads with matrix products on the other BLAS: OpenBLAS (GELU_BLAS=openblas) where the default is the own GEMM, else the own GEMM (GELU_BLAS=own)")
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
	if c.threads, err = bench.ParseThreads(threads); err == nil {
		err = run(c, os.Args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		os.Exit(1)
	}
}

// run measures the selected workloads on the three sides (this project on
// the machine's default BLAS, on the other BLAS, PyTorch) and writes the
// report.
func run(c config, argv []string) error {
	if c.reps < 1 || c.rounds < 1 || len(c.threads) == 0 {
		return fmt.Errorf("-reps %d -rounds %d -threads %v: want reps and rounds ≥ 1 and a thread count", c.reps, c.rounds, c.threads)
	}
	names, err := families.Select(workloadNames(c.scaling, c.quick), c.only)
	if err != nil {
		return err
	}
	ws, err := families.ParseAll(names)
	if err != nil {
		return err
	}
	py, err := bench.FindPython(c.python)
	if err != nil {
		return err
	}
	torch, err := bench.StartPeers(py, c.script, c.reps, bench.PeerSettings(c.threads))
	if err != nil {
		return err
	}
	defer torch.Close()
	// What this run compares is decided here, once, and recorded in the
	// summary (run.*): the report and its tests read the record, not the
	// machine as it is after the run.
	def, other, hasOther := bench.MachineBLAS()
	d := decided{blas: def.Name}
	if c.fallback && hasOther {
		d.other = other.Name
	}
	if py != "" {
		d.torch = torch.Info().Torch
	}
	sides := []bench.Side{
		def.Side(bench.Ours, c.reps, func(w bench.Workload) []bench.Setting {
			if w.Family.Name == "peak" {
				return def.Settings(peakThreads(c.threads), w)
			}
			return def.Settings(c.threads, w)
		}),
		other.Side(bench.Other, c.reps, func(w bench.Workload) []bench.Setting {
			if d.other == "" || !w.Family.BLAS {
				return nil
			}
			return other.Settings(c.threads, w)
		}),
		torch.Side(),
	}
	t, err := bench.Run(ws, sides, c.rounds, os.Stderr)
	if err != nil {
		return err
	}
	return writeReport(c, argv, ws, t, torch.Info(), d)
}

// peakThreads are the thread counts the peak is measured at: threads and
// 1, as a product below the split threshold runs on one thread whatever
// the setting, and its % of peak needs that peak.
func peakThreads(threads []int) []int {
	if slices.Contains(threads, 1) {
		return threads
	}
	return append([]int{1}, threads...)
}

// decided is what a run compares, decided once at its start: the default
// BLAS, the other BLAS ("" when none is run) and PyTorch's version ("" when
// PyTorch is not run).
type decided struct{ blas, other, torch string }
