package main

// The source documents' claims about dying neurons, checked against this
// program's measurements (the summary values set so far, read back with
// report.Float). Verdicts are computed from the measurements.

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/report"
)

const (
	doc000 = "000 (principles)"
	doc001 = "001 (blog)"
)

func claims(r *report.Report, c config, runs []*runResult) error {
	f, verdict := report.Format, report.VerdictOf
	var missing []string
	g := func(k string) float64 { // a typo in a key must not read as 0
		v, ok := r.Float(k)
		if !ok {
			missing = append(missing, k)
		}
		return v
	}
	roots, err := analysis.Roots(activation.GELU, 1, -10, 10)
	if err != nil {
		return err
	}
	root, rootList := math.NaN(), make([]string, len(roots))
	for i, z := range roots {
		rootList[i] = f(z)
	}
	if len(roots) > 0 {
		root = roots[0]
	}
	if len(roots) == 1 {
		r.Set("gelu.d1_root", root)
	}
	reluZero := g("neuron.relu.float64.dL_dw") == 0 && g("neuron.relu.float32.dL_dw") == 0 && g("descent.relu.z0_-1.z_end") == -1
	geluEnd, geluD1End := g("descent.gelu.z0_-1.z_end"), g("descent.gelu.z0_-1.d1_end")
	list := []report.Claim{
		{Source: doc000, Claim: "for ReLU at z = −1, a'(z) = 0, so ∂L/∂w = 0 and the neuron cannot update w",
			Measured: fmt.Sprintf("∂L/∂w through the graph: %s (float64), %s (float32); after %d descent steps z = %s",
				f(g("neuron.relu.float64.dL_dw")), f(g("neuron.relu.float32.dL_dw")), c.NeuronSteps, f(g("descent.relu.z0_-1.z_end"))),
			Verdict: verdict(reluZero)},
		{Source: doc000, Claim: "GELU'(−1) ≈ 0.159 − 0.242 = −0.083",
			Measured: fmt.Sprintf("%s; through the graph ∂L/∂w = %s against the analytic %s (float64)", report.FormatDigits(g("neuron.gelu.d1_at_m1"), 6),
				report.FormatDigits(g("neuron.gelu.float64.dL_dw"), 10), report.FormatDigits(g("neuron.gelu.float64.dL_dw_analytic"), 10)),
			Verdict: verdict(math.Abs(g("neuron.gelu.d1_at_m1")+0.083) <= 0.0005)},
		{Source: doc000, Claim: "GELU'(z) = Φ(z) + zφ(z) is non-zero for any finite z",
			Measured: fmt.Sprintf("GELU' has a zero at z = %s (GELU's minimum): roots found %s", report.FormatDigits(root, 8), strings.Join(rootList, ", ")),
			Verdict:  verdict(len(roots) == 0)},
		{Source: doc000, Claim: "at z = −1 GELU's non-zero gradient \"allows learning to proceed, preventing the neuron from dying\"",
			Measured: fmt.Sprintf("with t = %g, %d steps of gradient descent (lr %g) move z from −1 to %s, where GELU' = %s: the gradient points away from the "+
				"target because GELU' < 0 left of %s. From z = −0.5 the neuron learns (z → %s, loss %s)", neuronT, c.NeuronSteps, neuronLR, f(geluEnd), f(geluD1End),
				f(root), f(g("descent.gelu.z0_-0.5.z_end")), f(g("descent.gelu.z0_-0.5.loss_end"))),
			Verdict: verdict(!(geluEnd < -1 && math.Abs(geluD1End) < math.Abs(g("neuron.gelu.d1_at_m1"))))},
	}
	if len(missing) > 0 {
		return fmt.Errorf("claims: no measurement %v", missing)
	}
	list = append(list, sweepClaims(c, runs)...)
	for _, cl := range list {
		if err := r.Claim(cl); err != nil {
			return err
		}
	}
	return nil
}

// sweepClaims checks the claims on the MLP: GELU against ReLU at every
// (learning rate, bias init) that ran both, and where dead ReLU units'
// pre-activations are.
func sweepClaims(c config, runs []*runResult) []report.Claim {
	var pairs [][2]*runResult
	for _, relu := range runs {
		for _, gelu := range runs {
			if relu.Setting.Act == activation.ReLU && gelu.Setting.Act == activation.GELU && relu.Setting.LR == gelu.Setting.LR && relu.Setting.Bias == gelu.Setting.Bias {
				pairs = append(pairs, [2]*runResult{relu, gelu})
			}
		}
	}
	var out []report.Claim
	where := func(p [2]*runResult) string { return fmt.Sprintf("lr %g bias %s", p[0].Setting.LR, p[0].Setting.Bias) }
	deadEnd := func(r *runResult) float64 { return r.Curve.Last("dead_fraction") }
	// The first half of "GELU mitigates dying": GELU's dead fraction at the
	// end against ReLU's in every setting.
	var parts []string
	lower, higher, anyDead := 0, 0, false
	for _, p := range pairs {
		re, ge := deadEnd(p[0]), deadEnd(p[1])
		parts = append(parts, fmt.Sprintf("%s: ReLU %s, GELU %s", where(p), report.Format(re), report.Format(ge)))
		anyDead = anyDead || re > 0 || ge > 0
		if ge < re {
			lower++
		} else if ge > re {
			higher++
		}
	}
	if len(pairs) > 0 {
		v := report.Unclear
		if anyDead && higher == 0 && lower > 0 {
			v = report.Confirmed
		} else if higher > 0 {
			v = report.NotConfirmed
		}
		out = append(out, report.Claim{Source: doc000, Claim: "with GELU's smooth, non-zero gradient for negative inputs fewer units die than with ReLU (MLP on MNIST)",
			Measured: fmt.Sprintf("fraction of hidden units dead (|f'| ≤ %g on all %d probe images) after %d steps: %s. GELU lower in %d of %d settings, higher in %d",
				c.Tol, c.ProbeN, c.Steps, strings.Join(parts, "; "), lower, len(pairs), higher), Verdict: v})
	}
	// The second half: where ReLU's units died (half or more dead at the
	// end), does the GELU network still learn (test accuracy above 50%;
	// chance is 10%)?
	parts, n, learned := nil, 0, 0
	for _, p := range pairs {
		if deadEnd(p[0]) < 0.5 {
			continue
		}
		if n++; p[1].Values[accuracy] > 0.5 {
			learned++
		}
		parts = append(parts, fmt.Sprintf("%s: ReLU %s, GELU %s (median max |f'| %s)", where(p), report.Format(p[0].Values[accuracy]),
			report.Format(p[1].Values[accuracy]), report.Format(p[1].Curve.Last("median_max_abs_deriv"))))
	}
	if n > 0 {
		v := report.Unclear
		if 4*learned >= 3*n {
			v = report.Confirmed
		} else if 4*learned <= n {
			v = report.NotConfirmed
		}
		out = append(out, report.Claim{Source: doc000, Claim: "this \"helps mitigate the dying neuron problem\": the network keeps learning where ReLU's units die",
			Measured: fmt.Sprintf("test accuracy after %d steps in the %d settings where half or more of ReLU's units ended dead: %s. GELU above 50%% in %d of %d. "+
				"A GELU unit need not be dead at tol %g to be too slow to learn: the median over units of their largest |f'| is given",
				c.Steps, n, strings.Join(parts, "; "), learned, n, c.Tol), Verdict: v})
	}
	// Document 001: "dying ReLU arises when a neuron's input is near zero".
	parts, n = nil, 0
	far := 0
	for _, run := range runs {
		z := run.Values[deadMaxZ]
		if run.Setting.Act != activation.ReLU || math.IsNaN(z) {
			continue
		}
		n++
		parts = append(parts, fmt.Sprintf("lr %g bias %s: %s", run.Setting.LR, run.Setting.Bias, report.Format(z)))
		if z < -0.5 {
			far++
		}
	}
	if n > 0 {
		v := report.Unclear
		if far == n {
			v = report.NotConfirmed
		} else if far == 0 {
			v = report.Confirmed
		}
		out = append(out, report.Claim{Source: doc001, Claim: "dying ReLU arises when a neuron's input is near zero, making its output and gradient zero",
			Measured: fmt.Sprintf("ReLU' is 0 for every z ≤ 0, not only near 0; a unit dies when all its inputs are ≤ 0. Median over dead ReLU units of their "+
				"largest pre-activation on the probe set: %s (below −0.5 in %d of %d runs)", strings.Join(parts, "; "), far, n), Verdict: v})
	}
	return out
}
