package datasets

// The mini-batch loader: fixed-size batches in a reproducible order.

import (
	"fmt"
	"strconv"

	"github.com/geluproject/gelu/graph/rng"
	"gorgonia.org/tensor"
)

// LoaderConfig configures a Loader (the arguments of PyTorch's DataLoader
// that matter for in-memory data).
type LoaderConfig struct {
	BatchSize int
	// Shuffle draws a new order of the examples every epoch; without it
	// every epoch visits them in dataset order.
	Shuffle bool
	Seed    uint64
	// DropLast drops the last incomplete batch. Without it the last batch
	// is padded to BatchSize rows (see Batch).
	DropLast bool
	// Dtype of the batch tensors: tensor.Float32 (the default when unset)
	// or tensor.Float64.
	Dtype tensor.Dtype
	// OneHot makes Y of a labelled dataset BatchSize×Classes one-hot rows
	// instead of BatchSize class indices.
	OneHot bool
}

// Batch is one mini-batch. Its tensors and slices belong to the Loader (or
// TokenStream) and are overwritten by the next call to Batch: copy what
// must outlive it.
//
// A Loader's batches have exactly BatchSize rows, because graphs have
// fixed shapes. When the last batch of an epoch has fewer real examples,
// rows Size and after repeat the batch's own real rows cyclically (row
// j ≥ Size is a copy of row (j−Size) mod Size), so they are genuine
// examples seen twice. Count metrics over the first Size rows only; for
// training prefer DropLast.
type Batch struct {
	X      *tensor.Dense // BatchSize×Features; nil from sources of ids (TokenStream)
	Y      *tensor.Dense // BatchSize class indices, BatchSize×Classes one-hot, BatchSize×TargetDim targets, or nil
	Labels []int         // BatchSize class labels, nil without labels
	Index  []int         // BatchSize dataset indices of the rows (TokenStream: window starts)
	Size   int           // number of real examples: rows [0, Size)
	// Fields are the batch's values by name, as a trainer binds them to a
	// graph's inputs: "x", the features or input ids, and "y", the class
	// labels or token ids as IDs or the targets (or one-hot rows) as Values.
	Fields []Field
}

// Field is one named value of a batch: Shape[0] rows, held either as
// integer ids (token ids, class labels) or as float values.
type Field struct {
	Name   string
	Shape  []int         // rows first
	IDs    []int         // row-major ids; nil when Values holds the field
	Values *tensor.Dense // float32 or float64 values of Shape; nil when IDs holds the field
}

// Field returns the field named name.
func (b Batch) Field(name string) (Field, bool) {
	for _, f := range b.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Loader cuts a dataset into mini-batches. It reads the dataset at every
// call, so the dataset must not change while the loader is in use. A Loader
// is not safe for concurrent use.
type Loader struct {
	d       *Dataset
	cfg     LoaderConfig
	n, nb   int
	order   []int // the current epoch's permutation when shuffling
	ordered int   // epoch that order belongs to, -1 for none
	x, y    *tensor.Dense
	labels  []int
	index   []int
	fields  []Field
}

// NewLoader validates d (sizes, labels and finiteness; see Validate) and the
// configuration, and allocates the batch tensors.
func NewLoader(d *Dataset, cfg LoaderConfig) (*Loader, error) {
	if d == nil {
		return nil, fmt.Errorf("datasets.NewLoader: nil dataset")
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("datasets.NewLoader: %w", err)
	}
	if cfg.Dtype == (tensor.Dtype{}) {
		cfg.Dtype = tensor.Float32
	}
	if cfg.Dtype != tensor.Float32 && cfg.Dtype != tensor.Float64 {
		return nil, fmt.Errorf("datasets.NewLoader for %s: dtype %v, want float32 or float64", d.what(), cfg.Dtype)
	}
	if cfg.BatchSize <= 0 {
		return nil, fmt.Errorf("datasets.NewLoader for %s: batch size %d, want > 0", d.what(), cfg.BatchSize)
	}
	if cfg.OneHot && d.Labels == nil {
		return nil, fmt.Errorf("datasets.NewLoader for %s: OneHot needs class labels, the dataset has none", d.what())
	}
	// Batches may be larger than the dataset (rows are repeated), so the
	// batch tensors are checked against the limit, not against d.
	cols := max(d.Features, d.TargetDim)
	if cfg.OneHot {
		cols = max(cols, d.Classes)
	}
	if _, err := elements(fmt.Sprintf("datasets.NewLoader for %s: batch of %d rows", d.what(), cfg.BatchSize), cfg.BatchSize, cols); err != nil {
		return nil, err
	}
	n, b := d.Len(), cfg.BatchSize
	nb := (n + b - 1) / b
	if cfg.DropLast {
		nb = n / b
	}
	if nb == 0 {
		return nil, fmt.Errorf("datasets.NewLoader for %s: batch size %d with DropLast leaves no batch of %d examples", d.what(), b, n)
	}
	l := &Loader{d: d, cfg: cfg, n: n, nb: nb, ordered: -1, index: make([]int, b)}
	l.x = tensor.New(tensor.Of(cfg.Dtype), tensor.WithShape(b, d.Features))
	switch {
	case d.Labels != nil && cfg.OneHot:
		l.y = tensor.New(tensor.Of(cfg.Dtype), tensor.WithShape(b, d.Classes))
	case d.Labels != nil:
		l.y = tensor.New(tensor.Of(cfg.Dtype), tensor.WithShape(b))
	case d.Targets != nil:
		l.y = tensor.New(tensor.Of(cfg.Dtype), tensor.WithShape(b, d.TargetDim))
	}
	if d.Labels != nil {
		l.labels = make([]int, b)
	}
	l.fields = []Field{{Name: "x", Shape: []int{b, d.Features}, Values: l.x}}
	switch {
	case l.labels != nil && !cfg.OneHot:
		l.fields = append(l.fields, Field{Name: "y", Shape: []int{b}, IDs: l.labels})
	case l.y != nil:
		l.fields = append(l.fields, Field{Name: "y", Shape: l.y.Shape().Clone(), Values: l.y})
	}
	return l, nil
}

// NumBatches returns the number of batches per epoch (0 for a nil Loader).
func (l *Loader) NumBatches() int {
	if l == nil {
		return 0
	}
	return l.nb
}

// BatchSize returns the number of rows of every batch (0 for a nil Loader).
func (l *Loader) BatchSize() int {
	if l == nil {
		return 0
	}
	return l.cfg.BatchSize
}

// Dataset returns the dataset the loader reads (nil for a nil Loader).
func (l *Loader) Dataset() *Dataset {
	if l == nil {
		return nil
	}
	return l.d
}

// Batch returns batch i of epoch e (both from 0). The order of an epoch is a
// pure function of (Seed, epoch): with Shuffle it is the permutation
// rng.New(Seed, "epoch <e>").Perm(N), computed once per epoch and cached.
// Training can therefore resume at any (epoch, batch) and see exactly the
// batches of an uninterrupted run, and every example appears exactly once
// per epoch in batches [0, NumBatches) (except those DropLast drops).
func (l *Loader) Batch(epoch, i int) (_ Batch, err error) {
	if l == nil || l.d == nil {
		return Batch{}, fmt.Errorf("datasets: nil Loader (use NewLoader)")
	}
	defer func() {
		// Only reachable if the dataset was resized after NewLoader.
		if r := recover(); r != nil {
			err = fmt.Errorf("datasets.Loader for %s: dataset changed after NewLoader: %v", l.d.what(), r)
		}
	}()
	if epoch < 0 {
		return Batch{}, fmt.Errorf("datasets.Loader for %s: epoch %d, want ≥ 0", l.d.what(), epoch)
	}
	if i < 0 || i >= l.nb {
		return Batch{}, fmt.Errorf("datasets.Loader for %s: batch %d, want 0 ≤ batch < %d", l.d.what(), i, l.nb)
	}
	if l.cfg.Shuffle && l.ordered != epoch {
		l.shuffle(epoch)
	}
	b := l.cfg.BatchSize
	start := i * b
	size := min(b, l.n-start)
	for j := range b {
		k := start + j
		if j >= size {
			k = start + (j-size)%size
		}
		if l.cfg.Shuffle {
			k = l.order[k]
		}
		l.index[j] = k
		if l.labels != nil {
			l.labels[j] = l.d.Labels[k]
		}
	}
	if l.cfg.Dtype == tensor.Float32 {
		fill(l, l.x.Float32s(), l.yData32())
	} else {
		fill(l, l.x.Float64s(), l.yData64())
	}
	return Batch{X: l.x, Y: l.y, Labels: l.labels, Index: l.index, Size: size, Fields: l.fields}, nil
}

func (l *Loader) shuffle(epoch int) {
	if l.order == nil {
		l.order = make([]int, l.n)
	}
	// Same as Perm(n), into the existing slice.
	for k := range l.order {
		l.order[k] = k
	}
	rng.New(l.cfg.Seed, "epoch "+strconv.Itoa(epoch)).Shuffle(l.n, func(a, b int) {
		l.order[a], l.order[b] = l.order[b], l.order[a]
	})
	l.ordered = epoch
}

func (l *Loader) yData32() []float32 {
	if l.y == nil {
		return nil
	}
	return l.y.Float32s()
}

func (l *Loader) yData64() []float64 {
	if l.y == nil {
		return nil
	}
	return l.y.Float64s()
}

// fill copies the rows l.index into x and their labels or targets into y.
func fill[T float32 | float64](l *Loader, x, y []T) {
	d, f := l.d, l.d.Features
	if x32, ok := any(x).([]float32); ok {
		// The dataset's own type: a plain copy (memmove), several times
		// faster than the converting loop below.
		for j, k := range l.index {
			copy(x32[j*f:(j+1)*f], d.X[k*f:(k+1)*f])
		}
	} else {
		for j, k := range l.index {
			dst, src := x[j*f:(j+1)*f], d.X[k*f:(k+1)*f]
			for c, v := range src {
				dst[c] = T(v)
			}
		}
	}
	switch {
	case y == nil:
	case d.Labels != nil && l.cfg.OneHot:
		clear(y)
		for j, k := range l.index {
			y[j*d.Classes+d.Labels[k]] = 1
		}
	case d.Labels != nil:
		for j, k := range l.index {
			y[j] = T(d.Labels[k])
		}
	default:
		t := d.TargetDim
		for j, k := range l.index {
			dst, src := y[j*t:(j+1)*t], d.Targets[k*t:(k+1)*t]
			for c, v := range src {
				dst[c] = T(v)
			}
		}
	}
}
