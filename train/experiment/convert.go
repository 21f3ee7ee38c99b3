package experiment

// Convert returns s with every element converted to To, as To(v): token
// ids kept in a run's float64 Vectors and read back, for example.
func Convert[To, From ~int | ~float64 | ~float32](s []From) []To {
	out := make([]To, len(s))
	for i, v := range s {
		out[i] = To(v)
	}
	return out
}
