package experiment

// Runs paired across one difference: ReLU and GELU at the same learning
// rate and bias init, say, for a claim that compares them setting by
// setting.

// Pairs returns every pair of runs (x, y) with a(x.Setting), b(y.Setting)
// and key(x.Setting) == key(y.Setting), in the order of x in runs, then of
// y.
//
//	pairs := experiment.Pairs(runs, isReLU, isGELU, func(s setting) any { return [2]any{s.LR, s.Bias} })
func Pairs[S any, K comparable](runs []*Run[S], a, b func(S) bool, key func(S) K) [][2]*Run[S] {
	var out [][2]*Run[S]
	for _, x := range runs {
		if !a(x.Setting) {
			continue
		}
		for _, y := range runs {
			if b(y.Setting) && key(x.Setting) == key(y.Setting) {
				out = append(out, [2]*Run[S]{x, y})
			}
		}
	}
	return out
}
