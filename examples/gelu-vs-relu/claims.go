package main

// The paper's and the source documents' claims about training, checked
// against this run. Activations are compared seed by seed (seeds are
// paired) with a one-sided sign test (experiment.Compare): a claim "A is
// lower than B" is confirmed when A is lower in so many seeds that chance
// would do it with probability ≤ 5% (all 5 of 5 seeds, for instance), not
// confirmed when B is lower that often, and unclear otherwise — always the
// case with fewer than 5 seeds, whatever the medians say. The claims'
// words are the templates claim.* of report.md.tmpl.

import (
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

const alpha = 0.05

func claims(r *report.Report, pg *page, res *results) {
	tk := pg.trainKey()
	cmp := experiment.Comparisons[setting]{Report: r, Groups: res.Best, Values: map[string]func(*group) []float64{
		"final_train_loss": func(g *group) []float64 { return g.Final(tk) },
		"mean_train_loss":  func(g *group) []float64 { return g.Mean(tk) },
		"final_test_error": func(g *group) []float64 { return g.Final("test_error") },
	}}
	// versus compares a with b at opt on the quantity key, recording the
	// sign test under compare.<opt>.<key>.<a>_vs_<b> unless record is false.
	versus := func(opt string, a, b activation.Activation, key string, scale float64, record bool) (experiment.Versus, bool) {
		at := func(x activation.Activation) func(setting) bool {
			return func(s setting) bool { return s.Opt == opt && s.Act == x }
		}
		k := ""
		if record {
			k = "compare." + opt + "." + key + "." + a.Name() + "_vs_" + b.Name()
		}
		return cmp.Compare(key, at(a), at(b), a.Title(), b.Title(), scale, k)
	}
	// The paper: GELU's median training log loss is the lowest, with Adam.
	for _, gelu := range []activation.Activation{activation.GELUTanh, activation.GELU} {
		for _, other := range []activation.Activation{activation.ReLU, activation.ELU} {
			if v, ok := versus("adam", gelu, other, "final_train_loss", 1, true); ok {
				r.ClaimBlock(reportTmpl, "claim.paper", view{page: pg, Opt: "adam", Exact: gelu == activation.GELU, V: v}, v.Verdict(alpha))
			}
		}
	}
	for _, opt := range pg.Opts {
		// doc 001: GELU converges faster than the other activations.
		w := view{page: pg, Opt: opt}
		var verdicts []report.Verdict
		for _, a := range pg.Acts {
			if strings.HasPrefix(a.Name(), "gelu") {
				continue
			}
			if v, ok := versus(opt, activation.GELU, a, "mean_train_loss", 1, true); ok {
				w.Vs, verdicts = append(w.Vs, v), append(verdicts, v.Verdict(alpha))
			}
		}
		if len(w.Vs) > 0 {
			r.ClaimBlock(reportTmpl, "claim.faster", w, experiment.Weakest(verdicts...))
		}
		// doc 004: GELU outperforms ReLU (said of NLP; here MNIST test error).
		if w.V, _ = versus(opt, activation.GELU, activation.ReLU, "final_test_error", 100, true); w.V.A != "" {
			r.ClaimBlock(reportTmpl, "claim.better", w, w.V.Verdict(alpha))
		}
		// doc 000: smoother GELU gradients make momentum updates steadier
		// and convergence faster.
		if w.V, _ = versus(opt, activation.GELU, activation.ReLU, "mean_train_loss", 1, false); w.V.A != "" && opt == "sgd" {
			r.ClaimBlock(reportTmpl, "claim.momentum", w, w.V.Verdict(alpha))
		}
	}
}
