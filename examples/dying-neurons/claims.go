package main

// The source documents' claims about dying neurons, checked against this
// program's measurements. Verdicts are computed from the measurements.

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

const (
	doc000 = "000 (principles)"
	doc001 = "001 (blog)"
)

func verdict(ok bool) report.Verdict {
	if ok {
		return report.Confirmed
	}
	return report.NotConfirmed
}

func claims(r *report.Report, c config, m measured, runs []*runResult) error {
	f := report.Format
	var missing []string
	g := func(k string) float64 { // a typo in a key must not read as 0
		v, ok := m[k]
		if !ok {
			missing = append(missing, k)
		}
		return v
	}
	roots, err := ops.GELU.Roots(1, -10, 10)
	if err != nil {
		return err
	}
	if len(roots) == 1 {
		set(r, m, "gelu.d1_root", roots[0])
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
			Measured: fmt.Sprintf("GELU' has a zero at z = %s (GELU's minimum): roots found %s", report.FormatDigits(rootOr(roots), 8), fmtList(roots)),
			Verdict:  verdict(len(roots) == 0)},
		{Source: doc000, Claim: "at z = −1 GELU's non-zero gradient \"allows learning to proceed, preventing the neuron from dying\"",
			Measured: fmt.Sprintf("with t = %g, %d steps of gradient descent (lr %g) move z from −1 to %s, where GELU' = %s: the gradient points away from the "+
				"target because GELU' < 0 left of %s. From z = −0.5 the neuron learns (z → %s, loss %s)", neuronT, c.NeuronSteps, neuronLR, f(geluEnd), f(geluD1End),
				f(rootOr(roots)), f(g("descent.gelu.z0_-0.5.z_end")), f(g("descent.gelu.z0_-0.5.loss_end"))),
			Verdict: verdict(!(geluEnd < -1 && math.Abs(geluD1End) < math.Abs(g("neuron.gelu.d1_at_m1"))))},
	}
	if cl, ok := fewerDead(c, runs); ok {
		list = append(list, cl)
	}
	if cl, ok := keepsLearning(c, runs); ok {
		list = append(list, cl)
	}
	if cl, ok := nearZero(c, runs); ok {
		list = append(list, cl)
	}
	if len(missing) > 0 {
		return fmt.Errorf("claims: no measurement %v", missing)
	}
	for _, cl := range list {
		if err := r.Claim(cl); err != nil {
			return err
		}
	}
	return nil
}

func rootOr(roots []float64) float64 {
	if len(roots) == 0 {
		return math.NaN()
	}
	return roots[0]
}

// pairs returns the ReLU and GELU runs of each (lr, bias) setting that has
// both.
func pairs(runs []*runResult) [][2]*runResult {
	byKey := map[string]*[2]*runResult{}
	var order []string
	for _, res := range runs {
		k := fmt.Sprintf("lr=%g bias=%s", res.LR, res.Bias)
		if byKey[k] == nil {
			byKey[k] = &[2]*runResult{}
			order = append(order, k)
		}
		switch res.Act {
		case ops.ReLU:
			byKey[k][0] = res
		case ops.GELU:
			byKey[k][1] = res
		}
	}
	var out [][2]*runResult
	for _, k := range order {
		if p := byKey[k]; p[0] != nil && p[1] != nil {
			out = append(out, *p)
		}
	}
	return out
}

// fewerDead checks the first half of "GELU mitigates dying" on the MLP:
// GELU's dead fraction at the end against ReLU's in every setting.
func fewerDead(c config, runs []*runResult) (report.Claim, bool) {
	ps := pairs(runs)
	if len(ps) == 0 {
		return report.Claim{}, false
	}
	var parts []string
	lower, higher, anyDead := 0, 0, false
	for _, p := range ps {
		re, ge := p[0].Dead[len(p[0].Dead)-1], p[1].Dead[len(p[1].Dead)-1]
		parts = append(parts, fmt.Sprintf("lr %g bias %s: ReLU %s, GELU %s", p[0].LR, p[0].Bias, report.Format(re), report.Format(ge)))
		anyDead = anyDead || re > 0 || ge > 0
		if ge < re {
			lower++
		} else if ge > re {
			higher++
		}
	}
	v := report.Unclear
	switch {
	case anyDead && higher == 0 && lower > 0:
		v = report.Confirmed
	case higher > 0:
		v = report.NotConfirmed
	}
	return report.Claim{Source: doc000, Claim: "with GELU's smooth, non-zero gradient for negative inputs fewer units die than with ReLU (MLP on MNIST)",
		Measured: fmt.Sprintf("fraction of hidden units dead (|f'| ≤ %g on all %d probe images) after %d steps: %s. GELU lower in %d of %d settings, higher in %d",
			c.Tol, c.ProbeN, c.Steps, strings.Join(parts, "; "), lower, len(ps), higher),
		Verdict: v}, true
}

// keepsLearning checks the second half: where ReLU's units died (half or
// more dead at the end), does the GELU network still learn? A run counts
// as learning when its test accuracy exceeds 50% (chance is 10%).
func keepsLearning(c config, runs []*runResult) (report.Claim, bool) {
	var parts []string
	n, learned := 0, 0
	for _, p := range pairs(runs) {
		if p[0].Dead[len(p[0].Dead)-1] < 0.5 {
			continue
		}
		n++
		if p[1].Accuracy > 0.5 {
			learned++
		}
		parts = append(parts, fmt.Sprintf("lr %g bias %s: ReLU %s, GELU %s (median max |f'| %s)", p[0].LR, p[0].Bias,
			report.Format(p[0].Accuracy), report.Format(p[1].Accuracy), report.Format(p[1].MedianMaxD)))
	}
	if n == 0 {
		return report.Claim{}, false
	}
	v := report.Unclear
	switch {
	case 4*learned >= 3*n:
		v = report.Confirmed
	case 4*learned <= n:
		v = report.NotConfirmed
	}
	return report.Claim{Source: doc000, Claim: "this \"helps mitigate the dying neuron problem\": the network keeps learning where ReLU's units die",
		Measured: fmt.Sprintf("test accuracy after %d steps in the %d settings where half or more of ReLU's units ended dead: %s. GELU above 50%% in %d of %d. "+
			"A GELU unit need not be dead at tol %g to be too slow to learn: the median over units of their largest |f'| is given",
			c.Steps, n, strings.Join(parts, "; "), learned, n, c.Tol),
		Verdict: v}, true
}

// nearZero checks document 001's "dying ReLU arises when a neuron's input
// is near zero" against where dead ReLU units' pre-activations are.
func nearZero(c config, runs []*runResult) (report.Claim, bool) {
	var parts []string
	far := 0
	n := 0
	for _, res := range runs {
		if res.Act != ops.ReLU || math.IsNaN(res.DeadMaxZ) {
			continue
		}
		n++
		parts = append(parts, fmt.Sprintf("lr %g bias %s: %s", res.LR, res.Bias, report.Format(res.DeadMaxZ)))
		if res.DeadMaxZ < -0.5 {
			far++
		}
	}
	if n == 0 {
		return report.Claim{}, false
	}
	v := report.Unclear
	switch {
	case far == n:
		v = report.NotConfirmed
	case far == 0:
		v = report.Confirmed
	}
	return report.Claim{Source: doc001, Claim: "dying ReLU arises when a neuron's input is near zero, making its output and gradient zero",
		Measured: fmt.Sprintf("ReLU' is 0 for every z ≤ 0, not only near 0; a unit dies when all its inputs are ≤ 0. Median over dead ReLU units of their "+
			"largest pre-activation on the probe set: %s (below −0.5 in %d of %d runs)", strings.Join(parts, "; "), far, n),
		Verdict: v}, true
}
