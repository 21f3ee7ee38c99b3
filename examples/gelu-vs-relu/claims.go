package main

// The paper's and the source documents' claims about training, checked
// against this run. Activations are compared seed by seed (seeds are
// paired) with a one-sided sign test (experiment.Compare): a claim "A is
// lower than B" is confirmed when A is lower in so many seeds that chance
// would do it with probability ≤ 5% (all 5 of 5 seeds, for instance), not
// confirmed when B is lower that often, and unclear otherwise — always the
// case with fewer than 5 seeds, whatever the medians say.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

const alpha = 0.05

const (
	srcPaper = "Hendrycks & Gimpel 2016, §3.1 and Fig. 2"
	src000   = "doc 000 (principles)"
	src001   = "doc 001 (blog)"
	src004   = "doc 004 (tutorial)"
)

// compare pairs the seeds of a and b on one quantity, records the test
// under compare.<opt>.<key>.<a>_vs_<b> (unless key is ""), and describes it.
func compare(r *report.Report, a, b *group, key, what string, values func(*group) []float64, scale float64) (experiment.Paired, string) {
	va, vb := values(a), values(b)
	p := experiment.Compare(va, vb)
	if key != "" {
		k := fmt.Sprintf("compare.%s.%s.%s_vs_%s.", a.Setting.Opt, key, a.Setting.Act.Name(), b.Setting.Act.Name())
		r.Set(k+"lower_seeds", p.Lower)
		r.Set(k+"pairs", p.Lower+p.Higher)
		r.Set(k+"p_value", p.P)
		r.Set(k+"mean_diff", p.Mean)
		r.Set(k+"mean_diff_se", p.SE)
	}
	ma, mb := scale*experiment.Median(va), scale*experiment.Median(vb)
	dir := "lower"
	if ma > mb {
		dir = "higher"
	}
	return p, fmt.Sprintf("median %s %s %s vs %s %s (%s); %s lower in %d of %d paired seeds (sign test p = %s)",
		what, a.Setting.Act.Title(), report.Format(ma), b.Setting.Act.Title(), report.Format(mb), dir,
		a.Setting.Act.Title(), p.Lower, p.Lower+p.Higher, report.Format(p.P))
}

func claims(r *report.Report, c config, res *results) {
	tk := c.trainKey()
	finalTrain := func(g *group) []float64 { return g.Final(tk) }
	meanTrain := func(g *group) []float64 { return g.Mean(tk) }
	finalTest := func(g *group) []float64 { return g.Final("test_error") }
	after := fmt.Sprintf("after %d epoch(s), %d seed(s)", c.Epochs, c.Seeds)
	if c.Epochs < paperEpochs {
		after += fmt.Sprintf(" (the paper: %d epochs)", paperEpochs)
	}
	drop := "without dropout"
	if c.Dropout > 0 {
		drop = fmt.Sprintf("with dropout %g", c.Dropout)
	}
	get := func(opt string, a activation.Activation) *group {
		if !slices.Contains(c.Opts, opt) || !slices.Contains(c.Acts, a) {
			return nil
		}
		return best(res, opt, a)
	}
	// The paper: GELU's median training log loss is the lowest, with Adam.
	for _, gelu := range []activation.Activation{activation.GELUTanh, activation.GELU} {
		for _, other := range []activation.Activation{activation.ReLU, activation.ELU} {
			ga, gb := get("adam", gelu), get("adam", other)
			if ga == nil || gb == nil {
				continue
			}
			p, text := compare(r, ga, gb, "final_train_loss", "final training loss", finalTrain, 1)
			form := map[bool]string{true: "exact GELU (x·Φ(x))", false: "GELU (the tanh form the paper used)"}[gelu == activation.GELU]
			r.Claim(report.Claim{Source: srcPaper,
				Claim:    fmt.Sprintf("with Adam, %s, %s ends with a lower median training log loss than %s", drop, form, other.Title()),
				Measured: "Adam, " + after + ": " + text, Verdict: p.Verdict(alpha)})
		}
	}
	for _, opt := range c.Opts {
		g := get(opt, activation.GELU)
		if g == nil {
			continue
		}
		// doc 001: GELU converges faster than the other activations.
		var parts []string
		verdict := report.Confirmed
		for _, a := range c.Acts {
			if strings.HasPrefix(a.Name(), "gelu") {
				continue
			}
			p, _ := compare(r, g, get(opt, a), "mean_train_loss", "", meanTrain, 1)
			parts = append(parts, fmt.Sprintf("vs %s %s, lower in %d of %d seeds (p = %s)", a.Title(), report.Format(experiment.Median(meanTrain(get(opt, a)))),
				p.Lower, p.Lower+p.Higher, report.Format(p.P)))
			if v := p.Verdict(alpha); v == report.NotConfirmed || (v == report.Unclear && verdict == report.Confirmed) {
				verdict = v
			}
		}
		if len(parts) > 0 {
			r.Claim(report.Claim{Source: src001, Claim: "models with GELU converge faster than with other activation functions",
				Measured: fmt.Sprintf("%s, %s: median mean training loss over the run (area under the curve) GELU %s; %s",
					c.optLabel(opt), after, report.Format(experiment.Median(meanTrain(g))), strings.Join(parts, "; ")), Verdict: verdict})
		}
		relu := get(opt, activation.ReLU)
		if relu == nil {
			continue
		}
		// doc 004: GELU outperforms ReLU (said of NLP; here MNIST test error).
		p, text := compare(r, g, relu, "final_test_error", "final test error (%)", finalTest, 100)
		r.Claim(report.Claim{Source: src004, Claim: "GELU outperforms ReLU (stated for NLP benchmarks; tested here as MNIST test error)",
			Measured: c.optLabel(opt) + ", " + after + ": " + text, Verdict: p.Verdict(alpha)})
		// doc 000: smoother GELU gradients make momentum updates steadier and
		// convergence faster.
		if opt == "sgd" {
			p, text := compare(r, g, relu, "", "mean training loss over the run", meanTrain, 1)
			r.Claim(report.Claim{Source: src000,
				Claim:    "GELU's lower-variance gradients give steadier momentum updates and potentially faster convergence than ReLU (SGD with momentum)",
				Measured: c.optLabel(opt) + ", " + after + ": " + text, Verdict: p.Verdict(alpha)})
		}
	}
}
