package main

// The source documents' claims (shared/seeds/), quoted as claims and
// checked against this program's measurements, read back by summary key
// (r.Get: a typo fails the report); their sources and words are in
// report.md.tmpl, a block "claim.<id>" each (report.ClaimBlock). A
// numeric claim is confirmed when the measurement is within half a unit
// of the claim's last digit (report.Near); the verdicts are computed, not
// written in.

import (
	"math"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/report"
)

func claims(r *report.Report, trials int) error {
	g, ok := r.Get, report.VerdictOf
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
	d := claimData{R: r, Trials: trials, InflMax: gelu.Inflections[len(gelu.Inflections)-1], GELUAt1: activation.GELU.F(1), GELUAt2: activation.GELU.F(2), MeanInSD: g("gelu.E_f") / outSD}
	for _, cl := range []struct {
		id string
		v  report.Verdict
	}{
		{"gelu_sq", report.Near(g("gelu.E_d1sq.quad"), 0.42, 0.005)},
		{"relu_sq", report.Near(g("relu.E_d1sq.quad"), 0.5, 1e-12)},
		{"lower_variance", ok(g("gelu.E_d1sq.quad") < g("relu.E_d1sq.quad") && g("gelu.Var_d1.quad") < g("relu.Var_d1.quad"))},
		{"tanh_sample", ok(tanhFrac > 0.5)},
		{"range", ok(geluMin > -0.17 && geluMin < -0.165)},
		{"minimum", ok(math.Abs(geluMin+0.17) <= 0.005 && math.Abs(geluMinX+0.75) <= 0.005)},
		{"torch_m1", report.Near(gelu1, -0.1588, 0.00005)},
		{"d1_m1", report.Near(dgelu1, -0.083, 0.0005)},
		{"d2_0", ok(math.Abs(g("gelu.d2_0")-0.798) <= 0.0005 && g("softplus.d2_0") == 0.25)},
		{"inflections", ok(len(gelu.Inflections) == 2 && math.Abs(d.InflMax-math.Sqrt2) < 1e-12)},
		{"beta", ok(math.Abs(g("sigmoid_gated.d2_0")-g("gelu.d2_0")) < 1e-15)},
		{"relu_noise", ok(g("relu_noise.max_abs_z") < 4)},
		{"tails", ok(math.Abs(gRatio10-1) < math.Abs(gRatio5-1) && math.Abs(gRatio10-1) < 0.02 && math.Abs(sRatio10-1) < 0.02 && g("gelu.tail.gap_p5") < g("sigmoid_gated.tail.gap_p5"))},
		{"zero_centred", ok(math.Abs(g("gelu.E_f")) < 0.1*outSD)},
		{"indicator", report.Near(indicator.Value, d.GELUAt1, 1e-9)},
		{"erf_form", report.Near(erfForm, d.GELUAt2, 1e-9)},
	} {
		r.ClaimBlock(reportTmpl, "claim."+cl.id, d, cl.v)
	}
	return r.Err()
}

// claimData is what the claims' words in report.md.tmpl read: the
// measurements by summary key (.R.Get) and the few numbers kept nowhere else.
type claimData struct {
	R                         *report.Report
	Trials                    int
	InflMax, GELUAt1, GELUAt2 float64 // GELU's largest inflection point, GELU(1), GELU(2)
	MeanInSD                  float64 // E[GELU(X)] in standard deviations of GELU(X)
}
