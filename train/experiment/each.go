package experiment

// Measurements that are not training runs but share a Grid's scheduling.

// Each returns f of every setting, in the settings' order, computing
// workers of them at once: a Grid of one seed that keeps no files, so
// the BLAS runs one thread per call as in any grid. name names a setting
// in errors; every call must own its graph and random streams, so that
// the results do not depend on the scheduling.
func Each[S, T any](settings []S, name func(S) string, seed uint64, workers int, f func(S) (T, error)) ([]T, error) {
	out := make([]T, len(settings))
	index := make([]int, len(settings))
	for i := range index {
		index[i] = i
	}
	grid := Grid[int]{Settings: index, Seeds: []uint64{seed}, Workers: workers, Name: func(i int) string { return name(settings[i]) }}
	_, err := grid.Run(func(r *Run[int]) (err error) {
		out[r.Setting], err = f(settings[r.Setting])
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
