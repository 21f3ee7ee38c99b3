package datasets

// The in-memory Dataset and the operations that copy parts of it.

import (
	"fmt"
	"math"
	"slices"

	"github.com/geluproject/gelu/graph/rng"
)

// Dataset holds N examples of Features float32 values each, row-major in X,
// with either class labels or regression targets (or neither).
type Dataset struct {
	Name       string
	X          []float32 // N×Features, row-major
	Features   int
	Labels     []int     // N labels in [0, Classes), or nil
	Classes    int       // number of classes when Labels is set
	ClassNames []string  // optional: Classes names, e.g. "T-shirt/top"
	Targets    []float32 // N×TargetDim regression targets, or nil
	TargetDim  int
}

// Len returns the number of examples, len(X)/Features (0 when Features is
// not positive or d is nil).
func (d *Dataset) Len() int {
	if d == nil || d.Features <= 0 {
		return 0
	}
	return len(d.X) / d.Features
}

// row returns example i's features; the slice aliases X.
func (d *Dataset) row(i int) []float32 { return d.X[i*d.Features : (i+1)*d.Features] }

func (d *Dataset) what() string { return fmt.Sprintf("dataset %q", d.Name) }

// checkShape checks the sizes only; Validate also checks every value.
func (d *Dataset) checkShape() error {
	if d == nil {
		return fmt.Errorf("nil dataset")
	}
	if d.Features <= 0 {
		return fmt.Errorf("%s: Features = %d, want > 0", d.what(), d.Features)
	}
	if len(d.X)%d.Features != 0 {
		return fmt.Errorf("%s: len(X) = %d is not a multiple of Features = %d", d.what(), len(d.X), d.Features)
	}
	n := len(d.X) / d.Features
	if n == 0 {
		return fmt.Errorf("%s: no examples", d.what())
	}
	if d.Labels != nil && d.Targets != nil {
		return fmt.Errorf("%s: has both Labels and Targets, want at most one", d.what())
	}
	if d.Labels != nil {
		if len(d.Labels) != n {
			return fmt.Errorf("%s: %d labels for %d examples", d.what(), len(d.Labels), n)
		}
		if d.Classes < 1 {
			return fmt.Errorf("%s: Classes = %d with labels, want ≥ 1", d.what(), d.Classes)
		}
	}
	if d.ClassNames != nil && len(d.ClassNames) != d.Classes {
		return fmt.Errorf("%s: %d class names for %d classes", d.what(), len(d.ClassNames), d.Classes)
	}
	if d.Targets != nil {
		if d.TargetDim <= 0 {
			return fmt.Errorf("%s: TargetDim = %d with targets, want > 0", d.what(), d.TargetDim)
		}
		if len(d.Targets) != n*d.TargetDim {
			return fmt.Errorf("%s: len(Targets) = %d, want N×TargetDim = %d×%d", d.what(), len(d.Targets), n, d.TargetDim)
		}
	}
	return nil
}

// Validate checks that the sizes agree, that there is at least one example,
// that every label is in [0, Classes) and that every feature and target is
// finite.
func (d *Dataset) Validate() error {
	if err := d.checkShape(); err != nil {
		return err
	}
	for i, y := range d.Labels {
		if y < 0 || y >= d.Classes {
			return fmt.Errorf("%s: Labels[%d] = %d, want 0 ≤ label < Classes = %d", d.what(), i, y, d.Classes)
		}
	}
	for i, v := range d.X {
		if !finite32(v) {
			return fmt.Errorf("%s: X[%d] (example %d, feature %d) = %v, want a finite value",
				d.what(), i, i/d.Features, i%d.Features, v)
		}
	}
	for i, v := range d.Targets {
		if !finite32(v) {
			return fmt.Errorf("%s: Targets[%d] (example %d) = %v, want a finite value", d.what(), i, i/d.TargetDim, v)
		}
	}
	return nil
}

// Subset returns a copy of the examples idx, in that order. Indices may
// repeat (a bootstrap sample).
func (d *Dataset) Subset(idx []int) (*Dataset, error) {
	if err := d.checkShape(); err != nil {
		return nil, fmt.Errorf("datasets.Subset: %w", err)
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("datasets.Subset of %s: no indices", d.what())
	}
	n := d.Len()
	for k, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("datasets.Subset of %s: idx[%d] = %d, want 0 ≤ i < %d", d.what(), k, i, n)
		}
	}
	// Indices may repeat, so the copy can be far larger than d.
	if _, err := elements("datasets.Subset of "+d.what(), len(idx), max(d.Features, d.TargetDim)); err != nil {
		return nil, err
	}
	s := &Dataset{
		Name: d.Name, Features: d.Features, Classes: d.Classes, TargetDim: d.TargetDim,
		ClassNames: slices.Clone(d.ClassNames),
		X:          make([]float32, 0, len(idx)*d.Features),
	}
	for _, i := range idx {
		s.X = append(s.X, d.row(i)...)
	}
	if d.Labels != nil {
		s.Labels = make([]int, len(idx))
		for k, i := range idx {
			s.Labels[k] = d.Labels[i]
		}
	}
	if d.Targets != nil {
		s.Targets = make([]float32, 0, len(idx)*d.TargetDim)
		for _, i := range idx {
			s.Targets = append(s.Targets, d.Targets[i*d.TargetDim:(i+1)*d.TargetDim]...)
		}
	}
	return s, nil
}

// Clone returns a deep copy (for example before Standardize, which works in
// place), or nil for a nil d.
func (d *Dataset) Clone() *Dataset {
	if d == nil {
		return nil
	}
	c := *d
	c.X = slices.Clone(d.X)
	c.Labels = slices.Clone(d.Labels)
	c.ClassNames = slices.Clone(d.ClassNames)
	c.Targets = slices.Clone(d.Targets)
	return &c
}

// Split returns disjoint copies holding round(valFraction·N) validation
// examples and the rest for training, chosen by SplitIndices: the same seed
// gives the same split on any machine.
func (d *Dataset) Split(valFraction float64, seed uint64) (train, val *Dataset, err error) {
	if err := d.checkShape(); err != nil {
		return nil, nil, fmt.Errorf("datasets.Split: %w", err)
	}
	ti, vi, err := SplitIndices(d.Len(), valFraction, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("datasets.Split of %s: %w", d.what(), err)
	}
	if train, err = d.Subset(ti); err != nil {
		return nil, nil, err
	}
	if val, err = d.Subset(vi); err != nil {
		return nil, nil, err
	}
	train.Name, val.Name = d.Name+" (train split)", d.Name+" (validation split)"
	return train, val, nil
}

// SplitIndices splits [0, n) at random into training and validation index
// sets with round(valFraction·n) validation indices, each part non-empty
// and in increasing order. The choice is the first indices of a permutation
// drawn from rng.New(seed, "split"); n must be at most MaxElements.
func SplitIndices(n int, valFraction float64, seed uint64) (train, val []int, err error) {
	if !(valFraction > 0 && valFraction < 1) {
		return nil, nil, fmt.Errorf("validation fraction %v, want 0 < fraction < 1", valFraction)
	}
	nVal := int(math.Round(valFraction * float64(n)))
	if nVal < 1 || nVal > n-1 {
		return nil, nil, fmt.Errorf("validation fraction %v of %d examples leaves %d for validation and %d for training, want at least 1 in each",
			valFraction, n, nVal, n-nVal)
	}
	if _, err := elements("datasets.SplitIndices", n); err != nil {
		return nil, nil, err
	}
	p := rng.New(seed, "split").Perm(n)
	val, train = p[:nVal:nVal], p[nVal:]
	slices.Sort(val)
	slices.Sort(train)
	return train, val, nil
}

// ClassCounts returns the number of examples of each class (nil without
// labels, for a nil d, or when Classes exceeds MaxElements). Labels outside
// [0, Classes) are not counted.
func (d *Dataset) ClassCounts() []int {
	if d == nil || d.Labels == nil || d.Classes > MaxElements {
		return nil
	}
	c := make([]int, max(d.Classes, 0))
	for _, y := range d.Labels {
		if y >= 0 && y < len(c) {
			c[y]++
		}
	}
	return c
}

func finite32(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
