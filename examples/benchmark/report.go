package main

// The report: the tables the README's Performance section is made from.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/geluproject/gelu/train/report"
)

func writeReport(c config, argv []string, ws []workload, t tally, torch torchInfo, py string) error {
	r, err := report.New(c.out, "Benchmark: this project and PyTorch, each at its best thread setting", report.WithCommand(argv...))
	if err != nil {
		return err
	}
	torchName := "PyTorch (not run)"
	if py != "" {
		torchName = "PyTorch " + torch.Torch
	}
	r.Text(machineText(c, t, torch, torchName))
	r.Section("All workloads")
	r.Text(fmt.Sprintf("Each side at its best setting per workload (named beside it). Speedup = %s time / this project's time "+
		"(> 1: this project is faster), both from this run. Throughputs in Melem/s of 4M elements or in tokens/s (batch·T per step), step times in ms per step. "+
		"Peak RSS and heap allocations per step (runtime.MemStats: Mallocs over the timed runs after the warm-up, every goroutine, ÷ steps) are those of this project's child process at its best setting.", torchName))
	header := []string{"workload", "unit", sideOurs, "our setting"}
	if c.fallback {
		header = append(header, sidePureGo)
	}
	header = append(header, torchName, "PyTorch setting", "speedup vs PyTorch", "peak RSS MB", "allocs/step")
	var rows [][]any
	for _, w := range ws {
		key := strings.ReplaceAll(w.name, "/", ".")
		oset, o, _ := t.best(sideOurs, w.name)
		row := []any{w.name, w.fam.unit, w.value(o.Seconds), oset}
		r.Set(key+".ours", w.value(o.Seconds))
		r.Set(key+".ours_setting", oset)
		r.Set(key+".peak_rss_mb", o.PeakMB)
		r.Set(key+".allocs_per_step", o.Allocs)
		r.Set(key+".alloc_bytes_per_step", o.AllocBytes)
		if c.fallback {
			_, f, ok := t.best(sidePureGo, w.name)
			row = append(row, optional(ok, w.value(f.Seconds)))
			if ok {
				r.Set(key+".pure_go", w.value(f.Seconds))
			}
		}
		ts, tr, ok := t.best(sideTorch, w.name)
		row = append(row, optional(ok, w.value(tr.Seconds)), optional(ok, ts), optional(ok, tr.Seconds/o.Seconds), o.PeakMB, o.Allocs)
		if ok {
			r.Set(key+".pytorch", w.value(tr.Seconds))
			r.Set(key+".pytorch_setting", ts)
			r.Set(key+".speedup_vs_pytorch", tr.Seconds/o.Seconds)
		}
		rows = append(rows, row)
	}
	r.Table("benchmark", header, rows)
	r.Text(familiesText(ws))

	if rows, err := gptRows(ws, t, r); err != nil {
		return err
	} else if len(rows) > 0 {
		r.Section("GPT training step")
		r.Text("The gpt workloads (above) in tokens per second, batch·T / step time, each side at its best setting: this project with OpenBLAS, " +
			"this project with its own GEMM (GELU_BLAS=own) and " + torchName + "; a ratio is this project's tokens/s ÷ " + torchName + "'s. " +
			"Parameters are counted from this project's graph (the tied embedding once); bench_torch.py builds the same model, checked to have as many by the tests. " +
			"Allocations are per training step in steady state, in this project's child process at the setting named.")
		r.Table("gpt", []string{"model", "dtype", "parameters", "tokens/step", "tokens/s", "setting", "ms/step", "allocs/step", "KB allocated/step",
			"own GEMM tokens/s", "own GEMM setting", "own GEMM allocs/step", torchName + " tokens/s", "PyTorch setting", torchName + " ms/step",
			"ratio", "own GEMM ratio"}, rows)
	}

	if rows := pairRows(ws, t, "ffn", "gemm", r, "step_over_gemm"); len(rows) > 0 {
		r.Section("Training steps against their matrix products")
		r.Text("A step's time over the time of its six matrix products alone (gemm workload of the same shape and dtype), " +
			"each at its side's best setting: how far the step is from the matmul-only bound.")
		r.Table("ffn_vs_gemm", []string{"shape", "dtype", "step ms", "GEMMs ms", "step ÷ GEMMs", torchName + " step ms", torchName + " GEMMs ms", torchName + " step ÷ GEMMs"}, rows)
	}

	if rows := pairRows(ws, t, "gelu", "copy", r, "gelu_over_copy"); len(rows) > 0 {
		r.Section("GELU against a copy moving the same bytes")
		r.Text("The copy reference (copy/gelu-traffic) does the loads and stores of a GELU forward + backward and no real arithmetic: " +
			"the memory-bound floor. Its GB/s counts 5 element loads or stores per element (this project's copy). GELU time ÷ copy time near 1 means the kernel is memory-bound.")
		r.Table("gelu_vs_copy", []string{"form", "dtype", "copy GB/s", "GELU Melem/s", "copy Melem/s", "GELU time ÷ copy time", torchName + " GELU Melem/s", torchName + " copy Melem/s", torchName + " GELU time ÷ copy time"}, rows)
	}

	r.Section("Every setting tried")
	r.Text("Each (workload, setting) at its best round, in the workload's unit; — where a setting does not apply.")
	sh, sr := settingsTable(ws, t)
	r.Table("settings", sh, sr)

	r.Describe("*.ours", "this project's result at its best setting (Melem/s for gelu and copy, tokens/s for gpt, ms per step otherwise)")
	r.Describe("*.ours_setting", "the setting of *.ours")
	r.Describe("*.pure_go", "the same with GELU_BLAS=own (own GEMM, no OpenBLAS), best setting")
	r.Describe("*.pytorch", "PyTorch's result in the same unit at its best setting")
	r.Describe("*.pytorch_setting", "the setting of *.pytorch")
	r.Describe("*.speedup_vs_pytorch", "PyTorch time / this project's time, each at its best setting")
	r.Describe("*.peak_rss_mb", "peak resident memory of the child process that ran the workload at its best setting")
	r.Describe("*.allocs_per_step", "heap allocations per step in the timed runs (runtime.MemStats.Mallocs difference ÷ steps) of the child at the best setting")
	r.Describe("*.pure_go_allocs_per_step", "gpt: allocs_per_step of the own-GEMM child at its best setting")
	r.Describe("*.alloc_bytes_per_step", "heap bytes allocated per step, likewise (TotalAlloc)")
	r.Describe("*.params", "gpt: trainable scalars of the model, from this project's graph")
	r.Describe("*.step_over_gemm*", "ffn step time / the time of its six matrix products (ours; _pytorch: PyTorch's)")
	r.Describe("*.gelu_over_copy*", "GELU forward+backward time / the same-bytes copy's time (ours; _pytorch: PyTorch's)")
	if err := r.Close(); err != nil {
		return err
	}
	md, err := os.ReadFile(filepath.Join(c.out, "report.md"))
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(md)
	return err
}

// gptRows gives a row per gpt workload of ws: the model, each side's
// tokens/s, this project's allocations and the ratios to PyTorch.
func gptRows(ws []workload, t tally, r *report.Report) ([][]any, error) {
	var rows [][]any
	for _, w := range ws {
		if w.fam.name != "gpt" {
			continue
		}
		params, err := gptParams(w.args)
		if err != nil {
			return nil, err
		}
		r.Set(strings.ReplaceAll(w.name, "/", ".")+".params", params)
		oset, o, _ := t.best(sideOurs, w.name)
		fset, f, okF := t.best(sidePureGo, w.name)
		ts, tr, okT := t.best(sideTorch, w.name)
		rows = append(rows, []any{w.args, w.dt.String(), params, int(w.work), w.value(o.Seconds), oset, o.Seconds * 1e3, o.Allocs, o.AllocBytes / 1024,
			optional(okF, w.value(f.Seconds)), optional(okF, fset), optional(okF, f.Allocs),
			optional(okT, w.value(tr.Seconds)), optional(okT, ts), optional(okT, tr.Seconds*1e3),
			optional(okT, tr.Seconds/o.Seconds), optional(okT && okF, tr.Seconds/f.Seconds)})
		if okF {
			r.Set(strings.ReplaceAll(w.name, "/", ".")+".pure_go_allocs_per_step", f.Allocs)
		}
	}
	return rows, nil
}

// pairRows pairs each workload of family a with the workload of family b
// that has the same args and dtype (ffn with its gemm, gelu with the copy),
// and gives per pair and side the two values (in a's unit) and the ratio
// of their times, also set as summary key <a's name>.<key>[_pytorch].
func pairRows(ws []workload, t tally, a, b string, r *report.Report, key string) [][]any {
	var rows [][]any
	for _, w := range ws {
		if w.fam.name != a {
			continue
		}
		args := w.args
		if b == "copy" {
			args = "gelu-traffic"
		}
		pair := b + "/" + args + "/" + w.dt.String()
		row := []any{w.args, w.dt.String()}
		if b == "copy" { // the bandwidth the copy reached
			_, rb, ok := t.best(sideOurs, pair)
			row = append(row, optional(ok, float64(geluN*5*w.dt.Size())/rb.Seconds/1e9))
		}
		for i, side := range []string{sideOurs, sideTorch} {
			_, ra, okA := t.best(side, w.name)
			_, rb, okB := t.best(side, pair)
			ok := okA && okB
			row = append(row, optional(okA, w.value(ra.Seconds)), optional(okB, w.value(rb.Seconds)), optional(ok, ra.Seconds/rb.Seconds))
			if ok {
				r.Set(strings.ReplaceAll(w.name, "/", ".")+"."+key+[]string{"", "_pytorch"}[i], ra.Seconds/rb.Seconds)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// settingsTable has a row per workload and a column per (side, setting).
func settingsTable(ws []workload, t tally) ([]string, [][]any) {
	type col struct{ side, setting string }
	var cols []col
	seen := map[col]bool{}
	for _, side := range []string{sideOurs, sidePureGo, sideTorch} {
		for _, w := range ws {
			for _, s := range sortedSettings(t[side][w.name]) {
				if c := (col{side, s}); !seen[c] {
					seen[c] = true
					cols = append(cols, c)
				}
			}
		}
	}
	header := []string{"workload"}
	for _, c := range cols {
		header = append(header, c.side+": "+c.setting)
	}
	var rows [][]any
	for _, w := range ws {
		row := []any{w.name}
		for _, c := range cols {
			res, ok := t[c.side][w.name][c.setting]
			row = append(row, optional(ok, w.value(res.Seconds)))
		}
		rows = append(rows, row)
	}
	return header, rows
}

func sortedSettings(m map[string]result) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	// Setting names sort as the loops make them (GOMAXPROCS, then BLAS threads).
	slices.Sort(s)
	return s
}

func optional(ok bool, v any) any {
	if !ok {
		return "—"
	}
	return v
}

func familiesText(ws []workload) string {
	var b strings.Builder
	b.WriteString("Workloads:\n\n")
	seen := map[string]bool{}
	for _, w := range ws {
		if !seen[w.fam.name] {
			seen[w.fam.name] = true
			fmt.Fprintf(&b, "- **%s**: %s\n", w.fam.name, w.fam.about)
		}
	}
	return b.String()
}

var blasThreads = regexp.MustCompile(`, \d+ threads?\)`)

// machineText describes the machine, the libraries and the method.
func machineText(c config, t tally, torch torchInfo, torchName string) string {
	var blas string
	for _, byW := range t[sideOurs] {
		for _, res := range byW {
			if res.BLAS != "" {
				blas = blasThreads.ReplaceAllString(res.BLAS, ")")
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- Machine: %s, %d logical CPUs, %s; %s, %s/%s.\n", cpuModel(), runtime.NumCPU(), osName(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- This project's BLAS: %s. Settings tried: GOMAXPROCS ∈ %v and, for workloads with matrix products, OpenBLAS threads ∈ %v (OPENBLAS_NUM_THREADS).\n", blas, c.threads, c.threads)
	if c.fallback {
		fmt.Fprintf(&b, "- Own GEMM without OpenBLAS (GELU_BLAS=own), for workloads with matrix products: GOMAXPROCS ∈ %v.\n", c.threads)
	}
	if torch.Torch != "" {
		fmt.Fprintf(&b, "- %s, CPU capability %s, libraries loaded: %s. Settings tried: intra-op threads ∈ %v (torch.set_num_threads, with OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to the same number before import), inter-op threads %d.\n",
			torchName, torch.CPU, torch.BLAS, c.threads, torch.Interop)
	} else {
		fmt.Fprintf(&b, "- %s.\n", torchName)
	}
	fmt.Fprintf(&b, "- Method: best of %d rounds, alternating the sides workload by workload; a round's figure is the median of %d runs after %d warm-up runs. "+
		"A setting over %d× slower than its side's best on a workload is not run again in later rounds. "+
		"The machine may be shared: compare ratios within one run.\n", c.rounds, c.reps, warmup, hopeless)
	return b.String()
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "CPU unknown"
	}
	defer f.Close()
	model, avx512 := "CPU unknown", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.TrimSpace(v)
		case "flags":
			avx512 = avx512 || strings.Contains(v, " avx512f")
		}
	}
	if avx512 {
		model += " with AVX-512"
	}
	return model
}

func osName() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return runtime.GOOS
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return runtime.GOOS
}
