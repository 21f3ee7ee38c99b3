package main

// The report: the tables the README's Performance section is made from.
// Its prose is report.md.tmpl; the summary keys' meanings are keys.txt.

import (
	"embed"
	"os"
	"path/filepath"
	"regexp"
	"text/template"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/bench"
	"github.com/geluproject/gelu/train/report"
)

// threadCount is the thread count at the end of a kernel's name.
var threadCount = regexp.MustCompile(`, \d+ threads?\)`)

//go:embed report.md.tmpl keys.txt
var reportFiles embed.FS

var reportTmpl = template.Must(report.ParseTemplateFS(reportFiles))

// view is what report.md.tmpl sees.
type view struct {
	Machine bench.Machine
	// Finished is the date the run ended, UTC: speeds belong to a day's
	// machine and software.
	Finished string
	// BLAS is the default BLAS, as this project's children reported it
	// without the thread count; Other the other BLAS's ("" when not run);
	// Ours and OtherColumn head their columns.
	BLAS, Other             string
	Ours, OtherColumn       string
	Threads                 []int
	Rounds, Reps            int
	Warmup, Hopeless        int
	Torch                   bench.PeerInfo
	TorchName               string // "PyTorch <version>" or "PyTorch (not run)"
	Families                []*bench.Family
	Overview, GPT, Settings report.TableData
	FFNvsGEMM, GELUvsCopy   report.TableData
	// BF16 compares the bfloat16 workloads with their float32 ones;
	// BF16Kernel is gemm.BF16Name without the thread count.
	BF16       report.TableData
	BF16Kernel string
	// PeakISA is what the peak loop runs ("" where the peak is unknown);
	// Peak its rates, GEMMs the matmul workloads' table.
	PeakISA     string
	Peak, GEMMs report.TableData
	Quick       bool // tiny shapes: no mlp products
	FastestReps int  // timed runs of the peak
	// Decision is what this run says about the default BLAS on its CPU,
	// DecisionTable its evidence.
	Decision      bench.BLASDecision
	DecisionTable report.TableData
}

func writeReport(c config, argv []string, ws []bench.Workload, t bench.Tally, torch bench.PeerInfo, d decided) error {
	r, err := report.NewFromTemplate(c.out, reportTmpl, nil, report.WithCommand(argv...))
	if err != nil {
		return err
	}
	r.Set("run.blas_default", d.blas)
	r.Set("run.blas_other", d.other)
	r.Set("run.pytorch_version", d.torch)
	v := view{Machine: bench.ThisMachine(), Finished: time.Now().UTC().Format(time.DateOnly), BLAS: t.BLAS(bench.Ours), Other: t.BLAS(bench.Other), Ours: t.Column(bench.Ours), OtherColumn: t.Column(bench.Other),
		Threads: c.threads, Rounds: c.rounds, Reps: c.reps, Warmup: bench.Warmup, Hopeless: bench.Hopeless, Torch: torch,
		TorchName: "PyTorch (not run)", Families: bench.FamiliesOf(ws), PeakISA: gemm.PeakISA(), Quick: c.quick, FastestReps: max(c.reps, bench.FastestReps)}
	if d.torch != "" {
		v.TorchName = "PyTorch " + d.torch
	}
	tn := v.TorchName
	v.Overview = t.Overview(r, ws, tn)
	if v.GPT, err = gptTable(r, ws, t, tn); err != nil {
		return err
	}
	v.FFNvsGEMM = t.Pairs(r, ws, bench.Pair{Family: "ffn", Key: "step_over_gemm",
		Partner: func(w bench.Workload) string { return "gemm/" + w.Args + "/" + w.DtypeName() },
		Header:  []string{"shape", "dtype", "step ms", "GEMMs ms", "step ÷ GEMMs", tn + " step ms", tn + " GEMMs ms", tn + " step ÷ GEMMs"}})
	v.GELUvsCopy = t.Pairs(r, ws, bench.Pair{Family: "gelu", Key: "gelu_over_copy", Bytes: bench.CopyBytes,
		Partner: func(w bench.Workload) string { return "copy/gelu-traffic/" + w.DtypeName() },
		Header: []string{"form", "dtype", "copy GB/s", "GELU Melem/s", "copy Melem/s", "GELU time ÷ copy time",
			tn + " GELU Melem/s", tn + " copy Melem/s", tn + " GELU time ÷ copy time"}})
	v.BF16 = t.Pairs(r, ws, bench.Pair{Key: "bf16_over_float32",
		Only:    func(w bench.Workload) bool { return w.Autocast == graph.BFloat16 },
		Partner: func(w bench.Workload) string { return w.Family.Name + "/" + w.Args + "/float32" },
		Header: []string{"workload", "args", "dtype", "bfloat16", "float32", "bfloat16 time ÷ float32 time",
			tn + " bfloat16", tn + " float32", tn + " bfloat16 time ÷ float32 time"}})
	v.BF16Kernel = threadCount.ReplaceAllString(gemm.BF16Name(), ")")
	v.Peak = t.PeakTable(r, ws, peakThreads(c.threads))
	in := products(c.quick).in
	v.GEMMs = t.GEMMTable(r, ws, func(w bench.Workload) string { return in[w.Args] })
	v.Decision, v.DecisionTable = t.BLASDecision(r, ws)
	v.Settings = t.SettingsTable(ws)
	if err := r.Execute(reportTmpl, v); err != nil {
		return err
	}
	if err := r.DescribeKeysFS(reportFiles); err != nil {
		return err
	}
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

// gptTable has a row per gpt workload of ws: the model, each side's
// tokens/s (this project on the default BLAS, on the other BLAS, PyTorch),
// this project's allocations and the ratios to PyTorch.
func gptTable(r *report.Report, ws []bench.Workload, t bench.Tally, tn string) (report.TableData, error) {
	opt := bench.Optional
	var rows [][]any
	for _, w := range ws {
		if w.Family.Name != "gpt" {
			continue
		}
		params, err := bench.GPTParams(w.Args)
		if err != nil {
			return report.TableData{}, err
		}
		r.Set(w.Key()+".params", params)
		oset, o, _ := t.Best(bench.Ours, w.Name)
		fset, f, okF := t.Best(bench.Other, w.Name)
		ts, tr, okT := t.Best(bench.Peer, w.Name)
		rows = append(rows, []any{w.Args, w.DtypeName(), params, int(w.Work), w.Value(o.Seconds), oset, o.Seconds * 1e3, o.Allocs, o.AllocBytes / 1024,
			opt(okF, w.Value(f.Seconds)), opt(okF, fset), opt(okF, f.Allocs),
			opt(okT, w.Value(tr.Seconds)), opt(okT, ts), opt(okT, tr.Seconds*1e3),
			opt(okT, tr.Seconds/o.Seconds), opt(okT && okF, tr.Seconds/f.Seconds)})
		if okF {
			r.Set(w.Key()+".other_blas_allocs_per_step", f.Allocs)
		}
	}
	other := bench.ShortBLAS(t.BLAS(bench.Other))
	if other == "" {
		other = "other BLAS"
	}
	return report.TableData{Rows: rows, Header: []string{"model", "dtype", "parameters", "tokens/step", "tokens/s", "setting", "ms/step", "allocs/step",
		"KB allocated/step", other + " tokens/s", other + " setting", other + " allocs/step", tn + " tokens/s", "PyTorch setting", tn + " ms/step",
		"ratio", other + " ratio"}}, nil
}
