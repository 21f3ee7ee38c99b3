package datasets_test

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"gorgonia.org/tensor"
)

func newLoader(t *testing.T, d *datasets.Dataset, cfg datasets.LoaderConfig) *datasets.Loader {
	t.Helper()
	l, err := datasets.NewLoader(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// epochIndices concatenates the real rows' indices of every batch of an
// epoch.
func epochIndices(t *testing.T, l *datasets.Loader, epoch int) []int {
	t.Helper()
	var idx []int
	for i := range l.NumBatches() {
		b, err := l.Batch(epoch, i)
		if err != nil {
			t.Fatal(err)
		}
		idx = append(idx, b.Index[:b.Size]...)
	}
	return idx
}

func TestLoaderEveryExampleOncePerEpoch(t *testing.T) {
	d := seq(103, 3, 4)
	for _, dropLast := range []bool{false, true} {
		l := newLoader(t, d, datasets.LoaderConfig{BatchSize: 10, Shuffle: true, Seed: 5, DropLast: dropLast})
		wantBatches, wantRows := 11, 103
		if dropLast {
			wantBatches, wantRows = 10, 100
		}
		if l.NumBatches() != wantBatches {
			t.Fatalf("DropLast=%v: %d batches, want %d", dropLast, l.NumBatches(), wantBatches)
		}
		for e := range 3 {
			idx := epochIndices(t, l, e)
			if len(idx) != wantRows {
				t.Fatalf("epoch %d: %d rows, want %d", e, len(idx), wantRows)
			}
			// The order is rng.New(seed, "epoch <e>").Perm(N), as documented.
			perm := rng.New(5, "epoch "+strconv.Itoa(e)).Perm(103)
			if !slices.Equal(idx, perm[:wantRows]) {
				t.Errorf("epoch %d order is not the documented permutation", e)
			}
			seen := make([]int, 103)
			for _, k := range idx {
				seen[k]++
			}
			for k, c := range seen {
				if c > 1 || (!dropLast && c != 1) {
					t.Fatalf("epoch %d: example %d seen %d times", e, k, c)
				}
			}
		}
		if slices.Equal(epochIndices(t, l, 0), epochIndices(t, l, 1)) {
			t.Error("epochs 0 and 1 have the same order")
		}
	}
}

func TestLoaderWithoutShuffleKeepsDatasetOrder(t *testing.T) {
	l := newLoader(t, seq(7, 1, 2), datasets.LoaderConfig{BatchSize: 3})
	for e := range 2 {
		if idx := epochIndices(t, l, e); !slices.Equal(idx, []int{0, 1, 2, 3, 4, 5, 6}) {
			t.Errorf("epoch %d order %v, want dataset order", e, idx)
		}
	}
}

// Resuming at (epoch, batch) in a fresh loader, in any call order, gives
// the batches of an uninterrupted run.
func TestLoaderResumesExactly(t *testing.T) {
	d := seq(50, 2, 3)
	cfg := datasets.LoaderConfig{BatchSize: 8, Shuffle: true, Seed: 11}
	ref := newLoader(t, d, cfg)
	type key struct{ e, i int }
	want := map[key][]int{}
	for e := range 4 {
		for i := range ref.NumBatches() {
			b, _ := ref.Batch(e, i)
			want[key{e, i}] = slices.Clone(b.Index)
		}
	}
	l := newLoader(t, d, cfg)
	for _, k := range []key{{2, 3}, {0, 6}, {2, 4}, {3, 0}, {0, 0}, {2, 3}} {
		b, err := l.Batch(k.e, k.i)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.Index, want[k]) {
			t.Errorf("batch %v: indices %v, want %v", k, b.Index, want[k])
		}
	}
	other := newLoader(t, d, datasets.LoaderConfig{BatchSize: 8, Shuffle: true, Seed: 12})
	b, _ := other.Batch(0, 0)
	if slices.Equal(b.Index, want[key{0, 0}]) {
		t.Error("another seed gave the same first batch")
	}
}

func TestLoaderPadsLastBatchWithItsOwnRows(t *testing.T) {
	d := seq(10, 2, 3)
	for _, shuffle := range []bool{false, true} {
		l := newLoader(t, d, datasets.LoaderConfig{BatchSize: 4, Shuffle: shuffle, Seed: 2})
		b, err := l.Batch(0, 2)
		if err != nil {
			t.Fatal(err)
		}
		if b.Size != 2 || len(b.Index) != 4 || !slices.Equal(b.X.Shape(), tensor.Shape{4, 2}) {
			t.Fatalf("last batch size %d, %d indices, shape %v; want 2, 4, (4, 2)", b.Size, len(b.Index), b.X.Shape())
		}
		if b.Index[2] != b.Index[0] || b.Index[3] != b.Index[1] {
			t.Errorf("padding rows %v do not repeat the batch's first rows", b.Index)
		}
		x := b.X.Float32s()
		for j := range 4 {
			k := b.Index[j]
			if x[j*2] != float32(100*k) || b.Labels[j] != k%3 {
				t.Errorf("row %d holds %v label %d, want example %d", j, x[j*2], b.Labels[j], k)
			}
		}
	}
	// A batch larger than the dataset cycles through it.
	l := newLoader(t, seq(3, 1, 1), datasets.LoaderConfig{BatchSize: 8})
	b, _ := l.Batch(0, 0)
	if l.NumBatches() != 1 || b.Size != 3 || !slices.Equal(b.Index, []int{0, 1, 2, 0, 1, 2, 0, 1}) {
		t.Errorf("batch of 8 from 3 examples: %d batches, size %d, indices %v", l.NumBatches(), b.Size, b.Index)
	}
}

func TestLoaderBatchValues(t *testing.T) {
	cls := seq(9, 3, 4)
	reg := &datasets.Dataset{Name: "reg", Features: 2, TargetDim: 2}
	for i := range 9 {
		reg.X = append(reg.X, float32(i)+0.25, -float32(i)/3)
		reg.Targets = append(reg.Targets, float32(i)*1.5, float32(math.Sqrt(float64(i))))
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, c := range []struct {
			d      *datasets.Dataset
			oneHot bool
		}{{cls, false}, {cls, true}, {reg, false}} {
			l := newLoader(t, c.d, datasets.LoaderConfig{BatchSize: 4, Shuffle: true, Seed: 1, Dtype: dt, OneHot: c.oneHot})
			for i := range l.NumBatches() {
				b, err := l.Batch(1, i)
				if err != nil {
					t.Fatal(err)
				}
				if b.X.Dtype() != dt || b.Y.Dtype() != dt {
					t.Fatalf("dtypes %v, %v; want %v", b.X.Dtype(), b.Y.Dtype(), dt)
				}
				x, y := graph.Float64s(b.X), graph.Float64s(b.Y)
				f := c.d.Features
				for j, k := range b.Index {
					for q := range f {
						if x[j*f+q] != float64(c.d.X[k*f+q]) {
							t.Fatalf("%v %s: X[%d][%d] = %v, want %v", dt, c.d.Name, j, q, x[j*f+q], c.d.X[k*f+q])
						}
					}
					switch {
					case c.d.Targets != nil:
						if y[2*j] != float64(c.d.Targets[2*k]) || y[2*j+1] != float64(c.d.Targets[2*k+1]) {
							t.Fatalf("%v: Y row %d = %v, want targets of example %d", dt, j, y[2*j:2*j+2], k)
						}
					case c.oneHot:
						row := y[j*4 : j*4+4]
						for q, v := range row {
							if want := b2f(q == c.d.Labels[k]); v != want {
								t.Fatalf("%v: one-hot row %d = %v for label %d", dt, j, row, c.d.Labels[k])
							}
						}
					default:
						if y[j] != float64(c.d.Labels[k]) || b.Labels[j] != c.d.Labels[k] {
							t.Fatalf("%v: Y[%d] = %v, Labels[%d] = %d, want %d", dt, j, y[j], j, b.Labels[j], c.d.Labels[k])
						}
					}
				}
			}
		}
	}
	l := newLoader(t, cls, datasets.LoaderConfig{BatchSize: 4, OneHot: true})
	b, _ := l.Batch(0, 0)
	if !slices.Equal(b.Y.Shape(), tensor.Shape{4, 4}) {
		t.Errorf("one-hot Y shape %v, want (4, 4)", b.Y.Shape())
	}
	b, _ = newLoader(t, reg, datasets.LoaderConfig{BatchSize: 4}).Batch(0, 0)
	if b.Labels != nil || !slices.Equal(b.Y.Shape(), tensor.Shape{4, 2}) {
		t.Errorf("regression batch: labels %v, Y shape %v; want nil, (4, 2)", b.Labels, b.Y.Shape())
	}
	unl := &datasets.Dataset{Name: "x only", Features: 1, X: []float32{1, 2}}
	b, _ = newLoader(t, unl, datasets.LoaderConfig{BatchSize: 2}).Batch(0, 0)
	if b.Y != nil || b.Labels != nil {
		t.Error("a dataset without labels or targets gave a Y")
	}
	if _, ok := b.Field("y"); ok || len(b.Fields) != 1 {
		t.Errorf("a dataset without labels or targets has fields %v, want x only", b.Fields)
	}
}

// A Loader's fields are its tensors under the names a trainer binds: "x"
// the features, "y" the labels as ids, or the targets (and one-hot rows)
// as values.
func TestLoaderFields(t *testing.T) {
	reg := &datasets.Dataset{Name: "reg", Features: 1, TargetDim: 2, X: []float32{1, 2}, Targets: []float32{1, 2, 3, 4}}
	for _, c := range []struct {
		d      *datasets.Dataset
		oneHot bool
		ids    bool
		yShape []int
	}{{seq(9, 3, 4), false, true, []int{4}}, {seq(9, 3, 4), true, false, []int{4, 4}}, {reg, false, false, []int{4, 2}}} {
		b, err := newLoader(t, c.d, datasets.LoaderConfig{BatchSize: 4, OneHot: c.oneHot}).Batch(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		x, okx := b.Field("x")
		y, oky := b.Field("y")
		if !okx || !oky || x.Values != b.X || !slices.Equal(x.Shape, []int{4, c.d.Features}) || !slices.Equal(y.Shape, c.yShape) {
			t.Fatalf("%s (one-hot %v): fields %+v", c.d.Name, c.oneHot, b.Fields)
		}
		if c.ids && (y.Values != nil || !slices.Equal(y.IDs, b.Labels)) || !c.ids && (y.IDs != nil || y.Values != b.Y) {
			t.Errorf("%s (one-hot %v): y = %+v, want ids %v", c.d.Name, c.oneHot, y, c.ids)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Batches reuse the loader's tensors: after the first epoch's permutation
// is drawn, fetching a batch allocates nothing.
func TestLoaderReusesBatchMemory(t *testing.T) {
	l := newLoader(t, seq(64, 8, 4), datasets.LoaderConfig{BatchSize: 16, Shuffle: true, Seed: 3})
	b0, _ := l.Batch(0, 0)
	b1, _ := l.Batch(0, 1)
	if b0.X != b1.X || b0.Y != b1.Y || &b0.Index[0] != &b1.Index[0] {
		t.Error("batches do not share the loader's buffers")
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := l.Batch(0, i%4); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("Batch allocates %v times per call within an epoch, want 0", allocs)
	}
}

func TestLoaderErrors(t *testing.T) {
	d := seq(5, 2, 2)
	cases := []struct {
		d    *datasets.Dataset
		cfg  datasets.LoaderConfig
		want []string
	}{
		{d, datasets.LoaderConfig{BatchSize: 0}, []string{"batch size 0"}},
		{d, datasets.LoaderConfig{BatchSize: 2, Dtype: tensor.Int}, []string{"dtype int", "float32 or float64"}},
		{d, datasets.LoaderConfig{BatchSize: 6, DropLast: true}, []string{"leaves no batch of 5 examples"}},
		{&datasets.Dataset{Name: "r", Features: 1, X: []float32{1}, Targets: []float32{1}, TargetDim: 1}, datasets.LoaderConfig{BatchSize: 1, OneHot: true}, []string{"OneHot needs class labels"}},
		{&datasets.Dataset{Name: "nan", Features: 1, X: []float32{float32(math.NaN())}}, datasets.LoaderConfig{BatchSize: 1}, []string{"X[0]", "NaN"}},
		{nil, datasets.LoaderConfig{BatchSize: 1}, []string{"nil dataset"}},
	}
	for _, c := range cases {
		_, err := datasets.NewLoader(c.d, c.cfg)
		wantErr(t, err, c.want...)
	}
	l := newLoader(t, d, datasets.LoaderConfig{BatchSize: 2})
	_, err := l.Batch(0, 3)
	wantErr(t, err, "batch 3", "0 ≤ batch < 3")
	_, err = l.Batch(-1, 0)
	wantErr(t, err, "epoch -1")
	// Shrinking the dataset behind the loader's back is an error, not a panic.
	d.X, d.Labels = d.X[:2], d.Labels[:1]
	_, err = l.Batch(0, 2)
	wantErr(t, err, "dataset changed")
}

func BenchmarkLoaderBatch(b *testing.B) {
	// MNIST-shaped: 784 features, batches of 64.
	d := &datasets.Dataset{Name: "bench", Features: 784, X: make([]float32, 6400*784), Labels: make([]int, 6400), Classes: 10}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		b.Run(dt.String(), func(b *testing.B) {
			l, err := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: 64, Shuffle: true, Seed: 1, Dtype: dt})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := l.Batch(i/l.NumBatches(), i%l.NumBatches()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
