package probe

// What a DeadProbe reports, as a program records it: one row of values
// per probe (a training curve's columns), and the values at the end of a
// run.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/train/report"
)

// DeadMetrics names the values DeadProbe.Metrics returns for an MLP with
// layers hidden layers: the fraction of hidden units dead at the probe's
// tolerance ("dead_fraction"), the fraction exactly dead, f'(z) = 0 on
// every example ("dead_fraction_exact"), the median over hidden units of
// max |f'(z)| over the probe set ("median_max_abs_deriv"), then the
// number of dead units in each hidden layer ("dead_layer1", …).
func DeadMetrics(layers int) []string {
	m := []string{"dead_fraction", "dead_fraction_exact", "median_max_abs_deriv"}
	for l := range layers {
		m = append(m, fmt.Sprintf("dead_layer%d", l+1))
	}
	return m
}

// Metrics returns the values DeadMetrics names, measured at the last
// Observe.
func (p *DeadProbe) Metrics() []float64 {
	v := []float64{p.Units.DeadFraction(p.Tol), p.Units.DeadFraction(0), median(p.MaxAbsDeriv())}
	for l := range p.ever {
		v = append(v, float64(p.Units.DeadCount(l, p.Tol)))
	}
	return v
}

// EndValues returns what a run's end is summed up by, by name: the units
// dead at some probe ("ever_dead") and those of them alive at the last
// ("revived"), the median over the units dead at the last probe of their
// largest pre-activation ("dead_max_z_median", NaN when none is dead), and
// the mean of f'(z)² over all hidden units and probe examples at the last
// probe ("mean_sq_deriv").
func (p *DeadProbe) EndValues() map[string]float64 {
	ever, revived := p.EverDead()
	_, meanSq := p.Units.DerivMoments()
	return map[string]float64{"ever_dead": float64(ever), "revived": float64(revived),
		"dead_max_z_median": median(p.DeadMaxPre()), "mean_sq_deriv": meanSq}
}

// median returns the median of the finite values of v (NaN if none), by
// report.Quantiles: the same number experiment.Median gives.
func median(v []float64) float64 {
	runs := make([][]float64, len(v))
	for i, x := range v {
		runs[i] = []float64{x}
	}
	q, err := report.Quantiles(runs, 0.5)
	if err != nil {
		return math.NaN()
	}
	return q[0][0]
}
