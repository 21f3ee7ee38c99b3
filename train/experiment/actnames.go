package experiment

// Names returns the activations' names (activation.Activation.Name), in
// order: what summary keys and CSV columns use.
func (f Activations) Names() []string {
	var out []string
	for _, a := range f {
		out = append(out, a.Name())
	}
	return out
}

// Titles returns the activations' titles (activation.Activation.Title), in
// order: what tables and plot legends show.
func (f Activations) Titles() []string {
	var out []string
	for _, a := range f {
		out = append(out, a.Title())
	}
	return out
}
