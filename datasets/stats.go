package datasets

// Feature standardization, fitted on training data and applied to the
// validation and test sets (sklearn's StandardScaler, torchvision's
// Normalize).

import (
	"fmt"
	"math"
)

// Stats holds one mean and standard deviation per feature. Applying it maps
// x to (x − Mean)/Std.
type Stats struct {
	Mean, Std []float64
}

// Standardize computes every feature's mean and population standard
// deviation over d (in float64), rescales d in place to mean 0 and standard
// deviation 1, and returns the statistics so that Apply can transform the
// validation and test sets the same way. A constant feature (standard
// deviation 0, like MNIST's border pixels) gets Std 1, so it becomes 0
// instead of NaN.
//
// If d holds NaN or ±Inf, d is left unchanged and the Stats of the
// affected features are not finite (Apply rejects them); Validate finds the
// bad values.
//
// If d is nil or its sizes are inconsistent (no examples, or see
// Validate), d is left unchanged and the Stats are empty, which Apply
// rejects.
//
// A feature that is almost constant (a pixel lit in a handful of images)
// gets a tiny Std and large standardized values. For images prefer
// StandardizeGlobal, the usual per-channel normalization.
func (d *Dataset) Standardize() Stats {
	if d.checkShape() != nil {
		return Stats{}
	}
	n, f := d.Len(), d.Features
	s := Stats{Mean: make([]float64, f), Std: make([]float64, f)}
	// Two passes (mean, then squared deviations) avoid the cancellation of
	// E[x²] − E[x]².
	for i := range n {
		for j, v := range d.row(i) {
			s.Mean[j] += float64(v)
		}
	}
	for j := range s.Mean {
		s.Mean[j] /= float64(n)
	}
	for i := range n {
		for j, v := range d.row(i) {
			dv := float64(v) - s.Mean[j]
			s.Std[j] += dv * dv
		}
	}
	for j := range s.Std {
		s.Std[j] = math.Sqrt(s.Std[j] / float64(n))
		if s.Std[j] == 0 {
			s.Std[j] = 1
		}
	}
	if s.finite() {
		d.apply(s)
	}
	return s
}

// StandardizeGlobal is Standardize with a single mean and standard deviation
// over all values of X (torchvision's Normalize for one channel). The
// returned Stats repeats them for every feature, so Apply works unchanged.
// Non-finite values or inconsistent sizes leave d unchanged, as with
// Standardize.
func (d *Dataset) StandardizeGlobal() Stats {
	if d.checkShape() != nil {
		return Stats{}
	}
	n, f := d.Len(), d.Features
	vals := d.X[:n*f]
	mean, std := 0.0, 0.0
	for _, v := range vals {
		mean += float64(v)
	}
	if len(vals) > 0 {
		mean /= float64(len(vals))
	}
	for _, v := range vals {
		dv := float64(v) - mean
		std += dv * dv
	}
	if len(vals) > 0 {
		std = math.Sqrt(std / float64(len(vals)))
	}
	if std == 0 {
		std = 1
	}
	s := Stats{Mean: make([]float64, f), Std: make([]float64, f)}
	for j := range f {
		s.Mean[j], s.Std[j] = mean, std
	}
	if s.finite() {
		d.apply(s)
	}
	return s
}

func (s Stats) finite() bool {
	for j := range s.Mean {
		if math.IsNaN(s.Mean[j]) || math.IsInf(s.Mean[j], 0) || math.IsNaN(s.Std[j]) || math.IsInf(s.Std[j], 0) {
			return false
		}
	}
	return true
}

// Apply transforms d in place with statistics computed on another dataset
// (normally the training set).
func (d *Dataset) Apply(s Stats) error {
	if err := d.checkShape(); err != nil {
		return fmt.Errorf("datasets.Apply: %w", err)
	}
	if len(s.Mean) != d.Features || len(s.Std) != d.Features {
		return fmt.Errorf("datasets.Apply to %s: stats for %d means and %d stds, want %d features",
			d.what(), len(s.Mean), len(s.Std), d.Features)
	}
	for j := range s.Mean {
		if m, sd := s.Mean[j], s.Std[j]; math.IsNaN(m) || math.IsInf(m, 0) || !(sd > 0) || math.IsInf(sd, 0) {
			return fmt.Errorf("datasets.Apply to %s: feature %d has mean %v and std %v, want a finite mean and 0 < std < Inf",
				d.what(), j, m, sd)
		}
	}
	d.apply(s)
	return nil
}

func (d *Dataset) apply(s Stats) {
	for i := range d.Len() {
		r := d.row(i)
		for j, v := range r {
			r[j] = float32((float64(v) - s.Mean[j]) / s.Std[j])
		}
	}
}
