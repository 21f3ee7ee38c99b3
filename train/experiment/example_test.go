package experiment_test

import (
	"fmt"

	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/train/experiment"
)

// Two learning rates of noisy gradient descent on (w − 3)², five paired
// seeds each: the seed fixes the starting point and the noise, so both
// rates see the same ones. A real program trains a network in the
// function (Example_train). The body is the package documentation's
// first sketch.
func Example() {
	grid := experiment.Grid[float64]{Settings: []float64{0.05, 0.2}, Seeds: []uint64{1, 2, 3, 4, 5},
		Name: func(lr float64) string { return fmt.Sprintf("lr%g", lr) }, Metrics: []string{"loss"}}
	runs, err := grid.Run(func(r *experiment.Run[float64]) error {
		g := rng.New(r.Seed, "toy") // the start and the noise, the same for both rates
		w := g.Normal()
		for step := 1; step <= 20; step++ {
			w -= r.Setting * (2*(w-3) + g.Normal()) // a noisy gradient step on (w − 3)²
			if err := r.Curve.Add(step, (w-3)*(w-3)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	groups := experiment.Groups(runs) // one per setting, runs in seed order
	for _, g := range groups {
		b := g.Band("loss") // median, min, max over seeds per step; b.Series plots it
		fmt.Printf("%s: median loss at step %d: %.3f (seeds from %.3f to %.3f)\n", g.Name, b.Steps[9], b.Median[9], b.Min[9], b.Max[9])
	}
	p := experiment.Compare(groups[1].Final("loss"), groups[0].Final("loss"))
	fmt.Printf("lr 0.2 lower in %d of %d seeds: p = %.4f, %s\n", p.Lower, p.N, p.P, p.Verdict(0.05))
	// Output:
	// lr0.05: median loss at step 10: 0.618 (seeds from 0.503 to 1.686)
	// lr0.2: median loss at step 10: 0.040 (seeds from 0.002 to 0.214)
	// lr 0.2 lower in 5 of 5 seeds: p = 0.0312, confirmed
}
