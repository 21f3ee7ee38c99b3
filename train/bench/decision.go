package bench

// The evidence behind ops/gemm's default BLAS on the CPU a run was on:
// every workload with matrix products on the own GEMM and on OpenBLAS,
// each at its best setting.

import (
	"fmt"
	"strings"

	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/report"
)

// DecisionMargin is how much faster one BLAS must be on a workload to
// count as faster in a BLASDecision: best-of-rounds figures of one
// workload on a shared machine still differ by a few percent from run to
// run.
const DecisionMargin = 1.05

// BLASDecision is what a run says about the default BLAS on its CPU.
type BLASDecision struct {
	CPU     string // the CPU model as ops/gemm reads it (gemm.CPUModel)
	Default string // the default BLAS, as the children reported it
	// OwnAVX512: the own GEMM ran its AVX-512 kernels, where ops/gemm makes
	// it the default unless the CPU model is listed as measured otherwise.
	OwnAVX512 bool
	// Compared counts the workloads run on both; OpenBLASFaster and
	// OwnFaster name those on which one was over DecisionMargin times as
	// fast as the other.
	Compared                  int
	OpenBLASFaster, OwnFaster []string
}

// DefaultIsOwn reports whether the default BLAS is the own GEMM.
func (d BLASDecision) DefaultIsOwn() bool { return strings.HasPrefix(d.Default, "own GEMM") }

// BLASDecision compares the workloads of ws with matrix products (BLAS
// families with a peer: the training steps and their products together)
// on the own GEMM and on OpenBLAS, whichever of this project's sides ran
// each, at each one's best setting: a row per workload run on both, with
// OpenBLAS's time ÷ the own GEMM's (> 1: the own GEMM is faster), also set
// as summary key <workload key>.openblas_time_over_own. It sets
// blas_decision.cpu_model, .default, .compared and .openblas_faster (the
// workloads, comma-separated; "" for none).
func (t Tally) BLASDecision(r *report.Report, ws []Workload) (BLASDecision, report.TableData) {
	own, ob := t.sideWith("own GEMM"), t.sideWith("OpenBLAS")
	d := BLASDecision{CPU: gemm.CPUModel(), Default: ShortBLAS(t.BLAS(Ours)), OwnAVX512: strings.Contains(t.BLAS(own), "AVX-512")}
	var rows [][]any
	for _, w := range ws {
		if !w.Family.BLAS || w.Family.NoPeer || own == "" || ob == "" {
			continue
		}
		oset, o, okO := t.Best(own, w.Name)
		bset, b, okB := t.Best(ob, w.Name)
		if !okO || !okB {
			continue
		}
		ratio := b.Seconds / o.Seconds
		faster := "—"
		switch {
		case ratio > DecisionMargin:
			faster = "own GEMM"
			d.OwnFaster = append(d.OwnFaster, w.Name)
		case ratio < 1/DecisionMargin:
			faster = "OpenBLAS"
			d.OpenBLASFaster = append(d.OpenBLASFaster, w.Name)
		}
		d.Compared++
		r.Set(w.Key()+".openblas_time_over_own", ratio)
		rows = append(rows, []any{w.Name, w.Family.Unit, w.Value(o.Seconds), oset, w.Value(b.Seconds), bset, ratio, faster})
	}
	r.Set("blas_decision.cpu_model", d.CPU)
	r.Set("blas_decision.default", d.Default)
	r.Set("blas_decision.compared", d.Compared)
	r.Set("blas_decision.openblas_faster", strings.Join(d.OpenBLASFaster, ","))
	return d, report.TableData{Rows: rows, Header: []string{"workload", "unit", "own GEMM", "own GEMM setting", "OpenBLAS", "OpenBLAS setting",
		"OpenBLAS time ÷ own GEMM time", fmt.Sprintf("faster (by > %.0f%%)", 100*(DecisionMargin-1))}}
}
