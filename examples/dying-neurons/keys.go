package main

// The meaning of every key in summary.json, shown in report.md.

import "github.com/geluproject/gelu/train/report"

func describe(r *report.Report) {
	for _, d := range [][2]string{
		{"neuron.*.dL_dw", "∂L/∂w of the single neuron at z = −1 computed through the graph (key: neuron.<activation>.<dtype>.dL_dw)"},
		{"neuron.*.dL_dw_analytic", "(a(z) − t)·a'(z)·x at z = −1 from the float64 references"},
		{"neuron.*.dL_db", "∂L/∂b through the graph at z = −1"},
		{"neuron.*.d1_at_m1", "a'(−1)"},
		{"descent.*.z_end", "z after the gradient-descent steps on the single neuron, from the start z0 in the key"},
		{"descent.*.loss_end", "the loss ½(a(z) − t)² there"},
		{"descent.*.d1_end", "a'(z) there"},
		{"run.*.dead_start", "fraction of hidden units dead at tol before training (key: run.<activation>.lr_<lr>.bias_<init>)"},
		{"run.*.dead_end", "fraction dead at tol at the last probe (the last step, or the last probe before a divergence)"},
		{"run.*.dead_max", "largest fraction dead at tol over all probes"},
		{"run.*.dead_exact_end", "fraction with f'(z) = 0 exactly on every probe example at the last probe"},
		{"run.*.accuracy", "test accuracy after the last step (NaN if the run diverged)"},
		{"run.*.diverged_step", "step at which the loss, a gradient or a weight became NaN or ±Inf (0: never)"},
		{"run.*.dead_max_z_median", "median over the units dead at tol at the end of their largest pre-activation on the probe set (NaN: no dead unit)"},
		{"run.*.ever_dead", "number of hidden units dead at tol at one probe or more"},
		{"run.*.revived", "number of those alive at the last probe"},
		{"run.*.median_max_abs_deriv", "median over hidden units of max |f'(z)| on the probe set at the last probe: the largest slope a typical unit offers the gradient"},
		{"run.*.mean_sq_deriv", "mean of f'(z)² over all hidden units and probe examples at the last probe"},
		{"gelu.d1_root", "the zero of GELU' (GELU's minimum), found by ops.Activation.Roots"},
		{"claims.*", "numbers computed for the claims table; see the claim"},
	} {
		r.Describe(d[0], d[1])
	}
}
