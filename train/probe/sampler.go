package probe

// Batches drawn with replacement: with the parameters frozen, the
// gradients of such batches are independent and identically distributed,
// which is the assumption behind the stationary momentum formulas.

import (
	"fmt"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph/rng"
	"gorgonia.org/tensor"
)

// Sampler draws mini-batches whose rows are independent uniform draws
// from a dataset (with replacement). A datasets.Loader visits each example
// once per epoch, which makes the batches of an epoch dependent, enough,
// with few batches an epoch, to lower a momentum buffer's variance well
// below the prediction for independent gradients (see ExampleWatch); a
// Sampler's batches are independent.
type Sampler struct {
	d      *datasets.Dataset
	r      *rng.RNG
	x, y   *tensor.Dense
	labels []int
}

// NewSampler returns a sampler of batch rows from d with the given dtype
// (float32 or float64), drawing from the stream rng.New(seed, stream).
// Y holds class indices for a labelled dataset (like a Loader without
// OneHot), the targets for a regression dataset, or is nil.
func NewSampler(d *datasets.Dataset, batch int, dtype tensor.Dtype, seed uint64, stream string) (*Sampler, error) {
	if d == nil {
		return nil, fmt.Errorf("probe.NewSampler: nil dataset")
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("probe.NewSampler: %w", err)
	}
	if batch <= 0 {
		return nil, fmt.Errorf("probe.NewSampler: batch size %d, want > 0", batch)
	}
	if dtype != tensor.Float32 && dtype != tensor.Float64 {
		return nil, fmt.Errorf("probe.NewSampler: dtype %v, want float32 or float64", dtype)
	}
	s := &Sampler{d: d, r: rng.New(seed, stream), x: tensor.New(tensor.Of(dtype), tensor.WithShape(batch, d.Features))}
	switch {
	case d.Labels != nil:
		s.y = tensor.New(tensor.Of(dtype), tensor.WithShape(batch))
		s.labels = make([]int, batch)
	case d.Targets != nil:
		s.y = tensor.New(tensor.Of(dtype), tensor.WithShape(batch, d.TargetDim))
	}
	return s, nil
}

// Next draws the next batch. The tensors belong to the sampler and are
// overwritten by the next call; Labels likewise (nil without labels).
func (s *Sampler) Next() (x, y *tensor.Dense, labels []int) {
	b := s.x.Shape()[0]
	f := s.d.Features
	for i := 0; i < b; i++ {
		k := s.r.IntN(s.d.Len())
		row := s.d.X[k*f : (k+1)*f]
		switch xd := s.x.Data().(type) {
		case []float32:
			copy(xd[i*f:(i+1)*f], row)
		case []float64:
			for c, v := range row {
				xd[i*f+c] = float64(v)
			}
		}
		switch {
		case s.d.Labels != nil:
			s.labels[i] = s.d.Labels[k]
			setAt(s.y, i, float64(s.d.Labels[k]))
		case s.d.Targets != nil:
			t := s.d.TargetDim
			for c := 0; c < t; c++ {
				setAt(s.y, i*t+c, float64(s.d.Targets[k*t+c]))
			}
		}
	}
	return s.x, s.y, s.labels
}

func setAt(t *tensor.Dense, i int, v float64) {
	switch d := t.Data().(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	}
}
