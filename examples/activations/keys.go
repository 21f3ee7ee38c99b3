package main

// The meaning of every key in summary.json, shown in report.md.

// keys documents every summary key.
var keys = [][2]string{
	{"sigmoid_gated.*", "keys of x·σ(βx) with β = √(8/π) (activation.SigmoidGated), which matches GELU''(0)"},
	{"*.min_x", "where f attains its global minimum (absent for monotone activations)"},
	{"*.min_f", "the minimum value f(min_x)"},
	{"*.d1_0", "f'(0)"},
	{"*.d2_0", "f''(0)"},
	{"*.inflection_points", "zeros of f'' in [−10, 10] where f'' changes sign"},
	{"*.E_f", "E[f(X)], X ~ N(0, 1), by quadrature"},
	{"*.tail.f_m10", "f(−10)"}, {"*.tail.f_m5", "f(−5)"},
	{"*.tail.gap_p5", "5 − f(5) in float64"}, {"*.tail.gap_p10", "10 − f(10) in float64"},
	{"*.tail.logslope_m10", "f'(−10)/f(−10), the decay rate of |f| in the left tail (NaN where f(−10) = 0)"},
	{"approx.*.max_abs_diff", "max over x in [−10, 10] of |GELU(x) − approx(x)|"},
	{"approx.*.max_abs_diff_x", "|x| where that maximum is attained (the error is symmetric in x)"},
	{"approx.*.sample1000.*", "max |GELU − approx| over 1000 N(0,1) samples: first repetition, median, 5% and 95% over the repetitions, and the fraction of repetitions below 0.0002"},
	{"*.E_d1.*", "E[f'(X)], X ~ N(0, 1): quad ± quad_err (adaptive Gauss–Kronrod and its error estimate), mc ± mc_se (Monte Carlo mean and standard error), z = (quad − mc)/√(quad_err² + mc_se²)"},
	{"*.E_d1sq.*", "E[f'(X)²], same fields as E_d1"},
	{"*.Var_d1.*", "Var[f'(X)], same fields as E_d1 (Monte Carlo: sample variance and its standard error)"},
	{"expectations.max_abs_z", "largest |z| in the expectations table"},
	{"expectations.max_abs_z_pvalue", "probability that the largest of the 24 |z| is at least that large if every error bar is right"},
	{"relu_noise.max_abs_z", "largest |z| of the Monte Carlo check of E[ReLU(x+ε)] = xΦ(x/σ) + σφ(x/σ) over the table's (x, σ)"},
	{"claims.gelu_at_m1", "GELU(−1)"},
	{"claims.gelu_d1_at_m1", "GELU'(−1)"},
	{"claims.gelu_output_sd", "standard deviation of GELU(X), X ~ N(0, 1), by quadrature"},
	{"claims.indicator_form_at_1", "E[1·1{1 ≤ X}] = P(X ≥ 1): document 004's formula E[x·1{x ≤ X}] at x = 1"},
	{"claims.erf_form_at_2", "½(1 + erf(2/√2)): document 001's formula for GELU at x = 2"},
	{"claims.tanh_share_above_2e-4", "P(|GELU(X) − GELU_tanh(X)| > 0.0002), X ~ N(0, 1), by quadrature"},
	{"claims.gelu_tail_ratio_*", "(x − GELU(x))/φ(x) at x = 5 and 10, computed as −GELU(−x)/φ(x)"},
	{"claims.sigmoid_gated_tail_ratio_*", "(x − x·σ(βx))/(x·e^{−βx}), β = √(8/π), at x = 5 and 10, computed as −f(−x)/(x·e^{−βx})"},
}
