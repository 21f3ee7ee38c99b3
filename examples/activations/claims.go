package main

// The source documents' claims (shared/seeds/), quoted as claims and
// checked against this program's measurements, read back by summary key
// (r.Get: a typo fails the report). A numeric claim is confirmed when the
// measurement is within half a unit of the claim's last digit
// (report.Near); the verdicts are computed, not written in.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/report"
)

const (
	doc000 = "000 (principles)"
	doc001 = "001 (blog)"
	doc004 = "004 (tutorial)"
)

func claims(r *report.Report, trials int) error {
	f, fd, g, ok := report.Format, report.FormatDigits, r.Get, report.VerdictOf
	gelu, err := analysis.ProfileOf(activation.GELU)
	if err != nil {
		return err
	}
	gelu1, dgelu1 := activation.GELU.F(-1), activation.GELU.Deriv(-1)
	// doc 004: "GELU(x) = E[x·1{x ≤ X}]"; at x = 1 that is P(X ≥ 1).
	indicator, err := analysis.NormalExpectation(func(t float64) float64 { return map[bool]float64{true: 1}[1 <= t] }, 1)
	if err != nil {
		return err
	}
	// doc 001: "GeLU(x) = ½(1 + erf(x/√2))", at x = 2.
	erfForm := 0.5 * (1 + math.Erf(2/math.Sqrt2))
	// Tail ratios: (x − GELU(x))/φ(x) and (x − f_S(x))/(x·e^{−βx}) at x = 5
	// and x = 10, using x − f(x) = −f(−x) so that x = 10 is not lost to rounding.
	beta := math.Sqrt(8 / math.Pi)
	sg := activation.SigmoidGated(beta)
	gRatio5, gRatio10 := -activation.GELU.F(-5)/activation.NormalPDF(5), -activation.GELU.F(-10)/activation.NormalPDF(10)
	sRatio5, sRatio10 := -sg.F(-5)/(5*math.Exp(-5*beta)), -sg.F(-10)/(10*math.Exp(-10*beta))
	sd, err := analysis.NormalVariance(activation.GELU.F)
	if err != nil {
		return err
	}
	outSD := math.Sqrt(sd.Value)
	// The share of N(0,1) inputs where the tanh form is off by more than 0.0002.
	over, err := analysis.NormalExpectation(func(t float64) float64 {
		return map[bool]float64{true: 1}[math.Abs(activation.GELU.F(t)-activation.GELUTanh.F(t)) > 2e-4]
	})
	if err != nil {
		return err
	}
	r.SetAll("claims.", map[string]float64{"gelu_at_m1": gelu1, "gelu_d1_at_m1": dgelu1, "indicator_form_at_1": indicator.Value,
		"erf_form_at_2": erfForm, "gelu_tail_ratio_5": gRatio5, "gelu_tail_ratio_10": gRatio10, "sigmoid_gated_tail_ratio_5": sRatio5,
		"sigmoid_gated_tail_ratio_10": sRatio10, "gelu_output_sd": outSD, "tanh_share_above_2e-4": over.Value})
	tanhFrac, geluMin, geluMinX := g("approx.gelu_tanh.sample1000.frac_below_2e-4"), g("gelu.min_f"), g("gelu.min_x")
	inflMax := gelu.Inflections[len(gelu.Inflections)-1]
	for _, cl := range []struct {
		src, claim, measured string
		v                    report.Verdict
	}{
		{doc000, "E[GELU'(X)²] ≈ 0.42 for X ~ N(0,1) (\"numerical integration\")",
			fmt.Sprintf("%s by quadrature (closed form 1/3 + 2/(3√3π)); rounds to %.2f", fd(g("gelu.E_d1sq.quad"), 6), g("gelu.E_d1sq.quad")),
			report.Near(g("gelu.E_d1sq.quad"), 0.42, 0.005)},
		{doc000, "E[ReLU'(X)²] = 0.5", f(g("relu.E_d1sq.quad")), report.Near(g("relu.E_d1sq.quad"), 0.5, 1e-12)},
		{doc000, "GELU gives lower-variance gradients than ReLU (E[f'(X)²] lower)",
			fmt.Sprintf("E[f'²]: GELU %s < ReLU %s; Var[f']: GELU %s < ReLU %s", f(g("gelu.E_d1sq.quad")), f(g("relu.E_d1sq.quad")), f(g("gelu.Var_d1.quad")), f(g("relu.Var_d1.quad"))),
			ok(g("gelu.E_d1sq.quad") < g("relu.E_d1sq.quad") && g("gelu.Var_d1.quad") < g("relu.Var_d1.quad"))},
		{doc004, "max |exact − tanh approx| over torch.randn(1000) is \"typically < 0.0002\"",
			fmt.Sprintf("median over %d draws of 1000 samples %s (first draw %s), fraction of draws below 0.0002: %s. "+
				"The error exceeds 0.0002 on a share %s of N(0,1) inputs, so 1000 samples almost surely hit it; its maximum over all x is %s at |x| = %s",
				trials, f(g("approx.gelu_tanh.sample1000.median")), f(g("approx.gelu_tanh.sample1000.first")), f(tanhFrac), f(over.Value),
				f(g("approx.gelu_tanh.max_abs_diff")), f(g("approx.gelu_tanh.max_abs_diff_x"))),
			ok(tanhFrac > 0.5)},
		{doc004, "output range (−0.17, +∞) approximately", fmt.Sprintf("[%s, ∞): the minimum is above −0.17", fd(geluMin, 6)),
			ok(geluMin > -0.17 && geluMin < -0.165)},
		{doc004, "\"Maximum at negative: ≈ −0.17 at x ≈ −0.75\" (it is a minimum)", fmt.Sprintf("minimum %s at x = %s", fd(geluMin, 6), fd(geluMinX, 6)),
			ok(math.Abs(geluMin+0.17) <= 0.005 && math.Abs(geluMinX+0.75) <= 0.005)},
		{doc004, "torch prints GELU(−1) = −0.1588", fmt.Sprintf("%s, which prints as %.4f", fd(gelu1, 8), gelu1), report.Near(gelu1, -0.1588, 0.00005)},
		{doc000, "GELU'(−1) ≈ 0.159 − 0.242 = −0.083", fd(dgelu1, 6), report.Near(dgelu1, -0.083, 0.0005)},
		{doc000, "GELU''(0) = 2φ(0) ≈ 0.798; Softplus''(0) = 0.25", fmt.Sprintf("%s; %s", fd(g("gelu.d2_0"), 6), f(g("softplus.d2_0"))),
			ok(math.Abs(g("gelu.d2_0")-0.798) <= 0.0005 && g("softplus.d2_0") == 0.25)},
		{doc000, "GELU has inflection points at ±√2 and is convex between them", fmt.Sprintf("inflection points ±%s (√2 = %s)", fd(inflMax, 10), fd(math.Sqrt2, 10)),
			ok(len(gelu.Inflections) == 2 && math.Abs(inflMax-math.Sqrt2) < 1e-12)},
		{doc000, "β = √(8/π) makes x·σ(βx) match GELU''(0)", fmt.Sprintf("f''(0) = %s vs GELU''(0) = %s", fd(g("sigmoid_gated.d2_0"), 12), fd(g("gelu.d2_0"), 12)),
			ok(math.Abs(g("sigmoid_gated.d2_0")-g("gelu.d2_0")) < 1e-15)},
		{doc000, "E[ReLU(x+ε)] = xΦ(x/σ) + σφ(x/σ), ε ~ N(0, σ²) (001 and 002 give the σ = 1 case)", fmt.Sprintf("Monte Carlo at 15 (x, σ): largest |z| = %s", f(g("relu_noise.max_abs_z"))),
			ok(g("relu_noise.max_abs_z") < 4)},
		{doc000, "x − GELU(x) ~ φ(x) and x − x·σ(βx) ~ x·e^{−βx} as x → ∞, so GELU reaches the identity much faster",
			fmt.Sprintf("ratios at x = 5, 10: GELU %s, %s; sigmoid-gated %s, %s (→ 1); gaps at x = 5: %s vs %s", f(gRatio5), f(gRatio10), f(sRatio5), f(sRatio10), f(g("gelu.tail.gap_p5")), f(g("sigmoid_gated.tail.gap_p5"))),
			ok(math.Abs(gRatio10-1) < math.Abs(gRatio5-1) && math.Abs(gRatio10-1) < 0.02 && math.Abs(sRatio10-1) < 0.02 && g("gelu.tail.gap_p5") < g("sigmoid_gated.tail.gap_p5"))},
		{doc004, "GELU is \"approximately\" zero-centred", fmt.Sprintf("for X ~ N(0,1), E[GELU(X)] = %s = 1/(2√π), %s standard deviations of GELU(X) above 0 (ReLU: mean %s)",
			f(g("gelu.E_f")), f(g("gelu.E_f")/outSD), f(g("relu.E_f"))), ok(math.Abs(g("gelu.E_f")) < 0.1*outSD)},
		{doc004, "GELU(x) = E[x·1{x ≤ X}], X ~ N(0,1)", fmt.Sprintf("at x = 1 that is P(X ≥ 1) = %s, but GELU(1) = %s (the indicator must be 1{X ≤ x})", f(indicator.Value), f(activation.GELU.F(1))),
			report.Near(indicator.Value, activation.GELU.F(1), 1e-9)},
		{doc001, "GeLU(x) = ½(1 + erf(x/√2))", fmt.Sprintf("that is Φ(x): at x = 2 it gives %s, GELU(2) = %s", f(erfForm), f(activation.GELU.F(2))),
			report.Near(erfForm, activation.GELU.F(2), 1e-9)},
	} {
		r.Claim(report.Claim{Source: cl.src, Claim: cl.claim, Measured: cl.measured, Verdict: cl.v})
	}
	return nil
}
