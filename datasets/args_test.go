package datasets_test

// Hostile arguments to the exported constructors and methods: nil, zero,
// negative, overflowing and merely huge counts. Each must return an error
// (or a documented empty result) before allocating anything of the bad
// size, never panic.

import (
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

// noPanic runs f and turns a panic into a test failure naming the case, so
// that one bad case does not hide the others.
func noPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v", name, r)
		}
	}()
	f()
}

// Counts that break arithmetic on any platform: big (2⁶² on 64-bit, 2³⁰ on
// 32-bit) overflows when doubled, half·half wraps to 0. huge (2⁴⁰) fits a
// 64-bit int but not memory; the cases using it need a 64-bit int.
const (
	big  = math.MaxInt/2 + 1
	half = 1 << (bits.UintSize / 2)
	huge = 1 << (bits.UintSize - 24)
)

func need64(t *testing.T) {
	if bits.UintSize < 64 {
		t.Skip("2⁴⁰ does not fit an int here")
	}
}

func small() *datasets.Dataset {
	return &datasets.Dataset{Name: "small", Features: 2, X: []float32{1, 2, 3, 4, 5, 6}, Labels: []int{0, 1, 0}, Classes: 2}
}

func TestNewLoaderHugeBatch(t *testing.T) {
	cases := []struct {
		name string
		d    *datasets.Dataset
		cfg  datasets.LoaderConfig
		want string
	}{
		{"batch 2⁶²", small(), datasets.LoaderConfig{BatchSize: big}, "overflow"},
		{"batch MaxInt", small(), datasets.LoaderConfig{BatchSize: math.MaxInt}, "overflow"},
		{"batch 2²⁹+1 of 2 features", small(), datasets.LoaderConfig{BatchSize: 1<<29 + 1}, "datasets.MaxElements"},
		{"one-hot of 2⁶² classes", &datasets.Dataset{Name: "c", Features: 1, X: []float32{1}, Labels: []int{0}, Classes: big},
			datasets.LoaderConfig{BatchSize: 4, OneHot: true}, "overflow"},
		{"negative batch", small(), datasets.LoaderConfig{BatchSize: -1}, "batch size -1"},
	}
	for _, c := range cases {
		noPanic(t, c.name, func() {
			_, err := datasets.NewLoader(c.d, c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
			}
		})
	}
}

func TestConstructorsRejectHugeCounts(t *testing.T) {
	cases := []struct {
		name string
		f    func() error
		want string
	}{
		{"Spirals overflow", func() error {
			_, err := datasets.Spirals(datasets.SpiralsConfig{PerClass: big, Classes: 4})
			return err
		}, "overflow"},
		{"Spirals huge", func() error {
			_, err := datasets.Spirals(datasets.SpiralsConfig{PerClass: huge, Classes: 2})
			return err
		}, "datasets.MaxElements"},
		{"Blobs overflow", func() error {
			_, _, err := datasets.Blobs(datasets.BlobsConfig{PerClass: half, Classes: half, Features: 2})
			return err
		}, "overflow"},
		{"Blobs huge classes", func() error {
			_, _, err := datasets.Blobs(datasets.BlobsConfig{PerClass: 1, Classes: huge, Features: 2})
			return err
		}, "datasets.MaxElements"},
		{"NewTeacher overflow", func() error {
			_, err := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{half, half}})
			return err
		}, "overflow"},
		{"NewTeacher huge", func() error {
			_, err := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{1 << 20, 1 << 20}})
			return err
		}, "datasets.MaxElements"},
		{"Teacher.Sample huge", func() error {
			tc, err := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{4, 1}})
			if err != nil {
				return nil // fails the case: the error is about Sample
			}
			_, err = tc.Sample(huge, 0, 1)
			return err
		}, "datasets.MaxElements"},
		{"SplitIndices huge", func() error {
			_, _, err := datasets.SplitIndices(big, 0.5, 1)
			return err
		}, "datasets.MaxElements"},
		{"Windows huge", func() error {
			text := strings.Repeat("ab", 50000)
			v, err := datasets.NewCharVocab(text)
			if err != nil {
				return nil
			}
			_, err = v.Windows(text, 50000) // 50000 windows of 50000
			return err
		}, "datasets.MaxElements"},
		{"CharTask huge", func() error {
			_, _, _, err := datasets.CharTask(strings.Repeat("abcd", 50000),
				datasets.CharTaskConfig{Context: 60000, ChunkLen: 120000, ValFraction: 0.5})
			return err
		}, "datasets.MaxElements"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == "datasets.MaxElements" {
				need64(t)
			}
			noPanic(t, c.name, func() {
				err := c.f()
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
				}
			})
		})
	}
}

// Methods on a nil or inconsistent dataset, loader, vocabulary or teacher
// return errors or documented empty results.
func TestNilAndInconsistentReceivers(t *testing.T) {
	var d *datasets.Dataset
	noPanic(t, "nil dataset", func() {
		if d.Len() != 0 || d.Clone() != nil || d.ClassCounts() != nil {
			t.Error("nil dataset: Len, Clone or ClassCounts not empty")
		}
		wantErr(t, d.Validate(), "nil dataset")
		_, err := d.Subset([]int{0})
		wantErr(t, err, "nil dataset")
		_, _, err = d.Split(0.5, 1)
		wantErr(t, err, "nil dataset")
		wantErr(t, d.Apply(datasets.Stats{}), "nil dataset")
		if st := d.Standardize(); len(st.Mean) != 0 {
			t.Error("Standardize of a nil dataset returned statistics")
		}
		if st := d.StandardizeGlobal(); len(st.Mean) != 0 {
			t.Error("StandardizeGlobal of a nil dataset returned statistics")
		}
	})
	// Features far beyond X: nothing of that size may be allocated.
	bad := &datasets.Dataset{Name: "bad", Features: big}
	noPanic(t, "huge Features", func() {
		if st := bad.Standardize(); len(st.Mean) != 0 {
			t.Error("Standardize of a dataset without examples returned statistics")
		}
		if st := bad.StandardizeGlobal(); len(st.Mean) != 0 {
			t.Error("StandardizeGlobal of a dataset without examples returned statistics")
		}
	})
	hugeClasses := &datasets.Dataset{Name: "classes", Features: 1, X: []float32{1}, Labels: []int{0}, Classes: big}
	noPanic(t, "huge Classes", func() {
		if c := hugeClasses.ClassCounts(); c != nil {
			t.Errorf("ClassCounts with 2⁶² classes = %d counts, want nil", len(c))
		}
	})
	// Fields changed after the constructor.
	inconsistent := small()
	inconsistent.Features = 0
	noPanic(t, "Features 0", func() {
		if st := inconsistent.Standardize(); len(st.Mean) != 0 {
			t.Error("Standardize with Features 0 returned statistics")
		}
	})

	var l *datasets.Loader
	noPanic(t, "nil loader", func() {
		_, err := l.Batch(0, 0)
		wantErr(t, err, "nil Loader")
		if l.NumBatches() != 0 || l.BatchSize() != 0 || l.Dataset() != nil {
			t.Error("nil loader: NumBatches, BatchSize or Dataset not empty")
		}
	})

	var v *datasets.CharVocab
	noPanic(t, "nil vocabulary", func() {
		if v.Size() != 0 || v.Runes() != nil {
			t.Error("nil vocabulary: Size or Runes not empty")
		}
		_, err := v.Encode("a")
		wantErr(t, err, "nil CharVocab")
		_, err = v.Decode([]int{0})
		wantErr(t, err, "nil CharVocab")
		_, err = v.Windows("abc", 1)
		wantErr(t, err, "nil CharVocab")
	})

	var tc *datasets.Teacher
	noPanic(t, "nil teacher", func() {
		_, err := tc.Forward([]float64{1})
		wantErr(t, err, "nil Teacher")
		_, err = tc.Sample(1, 0, 1)
		wantErr(t, err, "nil Teacher")
	})
	// A teacher whose Sizes were edited to overflow must not pass check by
	// wrap-around.
	noPanic(t, "edited teacher", func() {
		tc, err := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{2, 1}})
		if err != nil {
			t.Fatal(err)
		}
		tc.Sizes = []int{big, 4} // 2⁶²·4 wraps to 0, the length of the weight slice below
		tc.Weights[0], tc.Biases[0] = nil, make([]float64, 4)
		_, err = tc.Sample(1, 0, 1)
		wantErr(t, err, "inconsistent teacher")
	})
}
