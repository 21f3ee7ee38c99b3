package experiment

import (
	"fmt"
	"math"
	"slices"
)

// Curve is what one run measured at its evaluations: at each of Steps, one
// value per metric. NaN marks a value not measured.
type Curve struct {
	Metrics []string    // metric names, in column order
	Steps   []int       // increasing
	Values  [][]float64 // Values[k][i] is metric k at Steps[i]
}

// NewCurve returns an empty curve of the named metrics.
func NewCurve(metrics ...string) Curve {
	return Curve{Metrics: slices.Clone(metrics), Values: make([][]float64, len(metrics))}
}

// Add appends the evaluation at step: one value per metric, in the order
// of Metrics. Steps must increase.
func (c *Curve) Add(step int, values ...float64) error {
	if len(values) != len(c.Metrics) {
		return fmt.Errorf("experiment: Curve.Add at step %d: %d values for the %d metrics %v", step, len(values), len(c.Metrics), c.Metrics)
	}
	if n := len(c.Steps); n > 0 && step <= c.Steps[n-1] {
		return fmt.Errorf("experiment: Curve.Add at step %d after step %d: steps must increase", step, c.Steps[n-1])
	}
	c.Steps = append(c.Steps, step)
	for k, v := range values {
		c.Values[k] = append(c.Values[k], v)
	}
	return nil
}

// Metric returns the values of the named metric at each step (shared, not
// a copy), or nil when the curve has no such metric.
func (c *Curve) Metric(name string) []float64 {
	if k := slices.Index(c.Metrics, name); k >= 0 {
		return c.Values[k]
	}
	return nil
}

// First returns the metric's value at the first evaluation: NaN when
// there is none or no such metric.
func (c *Curve) First(name string) float64 {
	v := c.Metric(name)
	if len(v) == 0 {
		return math.NaN()
	}
	return v[0]
}

// Last returns the metric's value at the last evaluation: NaN when there
// is none or no such metric.
func (c *Curve) Last(name string) float64 {
	v := c.Metric(name)
	if len(v) == 0 {
		return math.NaN()
	}
	return v[len(v)-1]
}

// at returns the metric's value at step, NaN if the curve has no
// evaluation there.
func (c *Curve) at(k, step int) float64 {
	if i, ok := slices.BinarySearch(c.Steps, step); ok {
		return c.Values[k][i]
	}
	return math.NaN()
}

// Before returns a copy of c with only its points before step at (steps
// increase, so a prefix): what is left of a curve when a run stops at
// step at.
func (c *Curve) Before(at int) Curve {
	n, _ := slices.BinarySearch(c.Steps, at)
	cut := Curve{Metrics: slices.Clone(c.Metrics), Steps: slices.Clone(c.Steps[:n]), Values: make([][]float64, len(c.Values))}
	for k, v := range c.Values {
		cut.Values[k] = slices.Clone(v[:n])
	}
	return cut
}
