package experiment

// Product3 returns setting(a, b, c) for every a in as, b in bs and c in cs:
// as outermost, cs innermost, so the settings of a grid come in the order
// of nested loops over as, bs and cs.
func Product3[A, B, C, S any](as []A, bs []B, cs []C, setting func(A, B, C) S) []S {
	out := make([]S, 0, len(as)*len(bs)*len(cs))
	for _, a := range as {
		for _, b := range bs {
			for _, c := range cs {
				out = append(out, setting(a, b, c))
			}
		}
	}
	return out
}
