package main

// The meaning of every key in summary.json, shown in report.md.

var keys = [][2]string{
	{"normal.*.E_d1", "E[f'(X)], X ~ N(0, 1), by quadrature (key: normal.<activation>.E_d1)"},
	{"normal.*.E_d1sq", "E[f'(X)²], X ~ N(0, 1)"},
	{"normal.*.Var_d1", "Var[f'(X)], X ~ N(0, 1)"},
	{"momentum.*.ratio", "Var(m)/Var(g) summed over all parameters (key: momentum.<activation>.<phase>.<form>.b<β>.ratio; phases: window_lr<learning rate>, frozen)"},
	{"momentum.*.ratio_se", "its batch-means standard error over the blocks"},
	{"momentum.*.predicted", "the stationary prediction: (1−β)/(1+β) for ema, 1/(1−β²) for heavy_ball"},
	{"momentum.*.expected", "predicted × probe.WindowFactor(β, window): what the window's sample variance should show for i.i.d. gradients"},
	{"momentum.*.z", "(ratio − expected)/ratio_se"},
	{"momentum.*.doc_ratio", "Var(m) / ((1−β)/(1+β)·Σ_j E[g_j²]): the measurement against the documents' formula"},
	{"momentum.*.mean_slope", "Σ_j mean(m_j)·mean(g_j) / Σ_j mean(g_j)²: 1 for ema and 1/(1−β) for heavy_ball when the formula holds"},
	{"momentum.*.grad_lag1", "variance-weighted lag-1 autocorrelation of the gradients (0 for independent ones)"},
	{"momentum.*.buf_lag1", "the same for the buffer (β for independent gradients)"},
	{"momentum.*.grad_var", "Σ_j Var(g_j) over the phase's measured steps"},
	{"momentum.*.grad_mean_sq", "Σ_j mean(g_j)² over the phase's measured steps"},
	{"grad.*.var", "Σ_j Var(g_j) over one parameter tensor or all (key: grad.<activation>.<phase>.<tensor or all>.var)"},
	{"grad.*.mean_sq", "Σ_j mean(g_j)² over the same elements"},
	{"net.*.E_d1", "mean of f'(z) over the hidden units and the first unit-batches batches of the phase (key: net.<activation>.<phase>.E_d1)"},
	{"net.*.E_d1sq", "mean of f'(z)² over the same"},
	{"accuracy.*", "test accuracy after the last window"},
	{"train.*.var", "Σ_j Var(g_j) over consecutive blocks of var-block training steps (array)"},
	{"train.*.loss", "mean training loss over the same blocks (array)"},
}
