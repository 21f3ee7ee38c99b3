package datasets_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

func wantErr(t *testing.T, err error, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("got no error, want one containing %q", substrs)
		return
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("got error %q, want one containing %q", err, s)
		}
	}
}

// seq returns a labelled dataset whose example i has features (i, 10i+j)
// and label i mod classes, so every copy can be traced to its source row.
func seq(n, features, classes int) *datasets.Dataset {
	d := &datasets.Dataset{Name: "seq", Features: features, Classes: classes}
	for i := range n {
		for j := range features {
			d.X = append(d.X, float32(100*i+j))
		}
		d.Labels = append(d.Labels, i%classes)
	}
	return d
}

func TestValidate(t *testing.T) {
	if err := seq(5, 3, 2).Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(d *datasets.Dataset)
		want []string
	}{
		{"no features", func(d *datasets.Dataset) { d.Features = 0 }, []string{"Features = 0"}},
		{"ragged", func(d *datasets.Dataset) { d.X = d.X[:14] }, []string{"len(X) = 14", "Features = 3"}},
		{"empty", func(d *datasets.Dataset) { d.X, d.Labels = nil, []int{} }, []string{"no examples"}},
		{"label count", func(d *datasets.Dataset) { d.Labels = d.Labels[:4] }, []string{"4 labels for 5 examples"}},
		{"label range", func(d *datasets.Dataset) { d.Labels[3] = 2 }, []string{"Labels[3] = 2", "Classes = 2"}},
		{"negative label", func(d *datasets.Dataset) { d.Labels[0] = -1 }, []string{"Labels[0] = -1"}},
		{"no classes", func(d *datasets.Dataset) { d.Classes = 0 }, []string{"Classes = 0"}},
		{"NaN", func(d *datasets.Dataset) { d.X[7] = float32(math.NaN()) }, []string{"X[7]", "example 2, feature 1", "NaN"}},
		{"Inf", func(d *datasets.Dataset) { d.X[0] = float32(math.Inf(-1)) }, []string{"-Inf"}},
		{"both", func(d *datasets.Dataset) { d.Targets, d.TargetDim = make([]float32, 5), 1 }, []string{"both Labels and Targets"}},
		{"class names", func(d *datasets.Dataset) { d.ClassNames = []string{"a"} }, []string{"1 class names for 2 classes"}},
		{"targets", func(d *datasets.Dataset) { d.Labels, d.Targets, d.TargetDim = nil, make([]float32, 9), 2 }, []string{"len(Targets) = 9", "5×2"}},
		{"target NaN", func(d *datasets.Dataset) {
			d.Labels, d.Targets, d.TargetDim = nil, make([]float32, 10), 2
			d.Targets[5] = float32(math.NaN())
		}, []string{"Targets[5] (example 2)"}},
	}
	for _, c := range cases {
		d := seq(5, 3, 2)
		c.edit(d)
		err := d.Validate()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		wantErr(t, err, append(c.want, `"seq"`)...)
	}
}

func TestSubsetCopiesRowsInOrder(t *testing.T) {
	d := seq(6, 2, 3)
	s, err := d.Subset([]int{4, 1, 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{400, 401, 100, 101, 400, 401}
	if !slices.Equal(s.X, want) || !slices.Equal(s.Labels, []int{1, 1, 1}) || s.Len() != 3 {
		t.Errorf("Subset = %v %v, want %v [1 1 1]", s.X, s.Labels, want)
	}
	s.X[0] = -1
	if d.X[400/100*2] != 400 {
		t.Error("Subset aliases the original")
	}
	_, err = d.Subset([]int{0, 6})
	wantErr(t, err, "idx[1] = 6", "0 ≤ i < 6")
	_, err = d.Subset(nil)
	wantErr(t, err, "no indices")

	r := &datasets.Dataset{Name: "reg", Features: 1, X: []float32{1, 2, 3}, Targets: []float32{10, 11, 20, 21, 30, 31}, TargetDim: 2}
	s, err = r.Subset([]int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Targets, []float32{30, 31, 10, 11}) || s.Labels != nil {
		t.Errorf("regression Subset targets %v labels %v", s.Targets, s.Labels)
	}
}

func TestSplitIsDeterministicDisjointAndComplete(t *testing.T) {
	d := seq(101, 2, 5)
	tr, va, err := d.Split(0.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 81 || va.Len() != 20 { // round(0.2·101) = 20
		t.Fatalf("split sizes %d/%d, want 81/20", tr.Len(), va.Len())
	}
	// Feature 0 of each row is 100·(source index): recover the indices.
	src := func(s *datasets.Dataset) []int {
		var idx []int
		for i := range s.Len() {
			idx = append(idx, int(s.X[i*2])/100)
			if s.Labels[i] != idx[i]%5 || s.X[i*2+1] != s.X[i*2]+1 {
				t.Errorf("row %d of %s does not match its source %d", i, s.Name, idx[i])
			}
		}
		return idx
	}
	ti, vi := src(tr), src(va)
	all := append(slices.Clone(ti), vi...)
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("train ∪ val is not every example exactly once: %v", all)
		}
	}
	if !slices.IsSorted(ti) || !slices.IsSorted(vi) {
		t.Error("split parts are not in dataset order")
	}
	tr2, va2, _ := d.Split(0.2, 7)
	if !slices.Equal(tr.X, tr2.X) || !slices.Equal(va.X, va2.X) {
		t.Error("same seed gave a different split")
	}
	_, va3, _ := d.Split(0.2, 8)
	if slices.Equal(va.X, va3.X) {
		t.Error("another seed gave the same split")
	}
	// The split is the documented function of the seed.
	gti, gvi, _ := datasets.SplitIndices(101, 0.2, 7)
	if !slices.Equal(gti, ti) || !slices.Equal(gvi, vi) {
		t.Error("Split does not follow SplitIndices")
	}
	for _, f := range []float64{0, 1, -0.1, math.NaN(), 0.001} {
		_, _, err := d.Split(f, 1)
		if err == nil {
			t.Errorf("Split(%v) gave no error", f)
		}
	}
	_, _, err = d.Split(0.001, 1)
	wantErr(t, err, "leaves 0 for validation")
}

// A stratification-free split still keeps class proportions close to the
// population's: each class's validation count is hypergeometric.
func TestSplitClassProportions(t *testing.T) {
	d := seq(10000, 1, 4)
	_, va, err := d.Split(0.25, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Hypergeometric sd for 2500 draws from 10000 with 2500 successes:
	// sqrt(2500·0.25·0.75·7500/9999) ≈ 18.7.
	for c, n := range va.ClassCounts() {
		if math.Abs(float64(n)-625) > 5*18.7 {
			t.Errorf("class %d has %d validation examples, want about 625", c, n)
		}
	}
}

func TestStandardizeAndApply(t *testing.T) {
	for _, global := range []bool{false, true} {
		d := &datasets.Dataset{Name: "s", Features: 3}
		for i := range 50 {
			x := float64(i)
			// Feature 0: affine in i; feature 1: quadratic; feature 2 constant.
			d.X = append(d.X, float32(3*x-7), float32(x*x/10), 5)
		}
		orig := d.Clone()
		var st datasets.Stats
		if global {
			st = d.StandardizeGlobal()
		} else {
			st = d.Standardize()
		}
		// Independent reference: closed forms over i = 0..49 in float64.
		// mean(i) = 24.5, var(i) = (50²−1)/12; mean(i²) = 49·99/6.
		mi, vi := 24.5, (2500.0-1)/12
		mi2 := 49.0 * 99 / 6
		var s4 float64
		for i := range 50 {
			s4 += math.Pow(float64(i), 4)
		}
		vi2 := s4/50 - mi2*mi2
		wantMean := []float64{3*mi - 7, mi2 / 10, 5}
		wantStd := []float64{3 * math.Sqrt(vi), math.Sqrt(vi2) / 10, 1}
		if global {
			var all []float64
			for _, v := range orig.X {
				all = append(all, float64(v))
			}
			m, s := meanStd(all)
			wantMean = []float64{m, m, m}
			wantStd = []float64{s, s, s}
		}
		for j := range 3 {
			if math.Abs(st.Mean[j]-wantMean[j]) > 1e-9*math.Max(1, math.Abs(wantMean[j])) ||
				math.Abs(st.Std[j]-wantStd[j]) > 1e-9*wantStd[j] {
				t.Errorf("global=%v feature %d: stats %v, %v; want %v, %v", global, j, st.Mean[j], st.Std[j], wantMean[j], wantStd[j])
			}
		}
		for i := range 50 {
			for j := range 3 {
				want := (float64(orig.X[i*3+j]) - wantMean[j]) / wantStd[j]
				if got := float64(d.X[i*3+j]); math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
					t.Fatalf("global=%v x[%d][%d] = %v, want %v", global, i, j, got, want)
				}
			}
		}
		// Apply the training statistics to another set.
		other := &datasets.Dataset{Name: "o", Features: 3, X: []float32{100, -2, 5}}
		if err := other.Apply(st); err != nil {
			t.Fatal(err)
		}
		for j, v := range []float64{100, -2, 5} {
			want := (v - wantMean[j]) / wantStd[j]
			if math.Abs(float64(other.X[j])-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("global=%v Apply feature %d = %v, want %v", global, j, other.X[j], want)
			}
		}
	}
	d := seq(3, 2, 1)
	wantErr(t, d.Apply(datasets.Stats{Mean: []float64{0}, Std: []float64{1}}), "1 means and 1 stds, want 2 features")
	wantErr(t, d.Apply(datasets.Stats{Mean: []float64{0, 0}, Std: []float64{1, 0}}), "feature 1", "std 0")
	wantErr(t, d.Apply(datasets.Stats{Mean: []float64{math.NaN(), 0}, Std: []float64{1, 1}}), "feature 0", "mean NaN")
	// A NaN is not spread over its feature: d stays as it was.
	for _, global := range []bool{false, true} {
		bad := &datasets.Dataset{Name: "nan", Features: 2, X: []float32{1, 2, float32(math.NaN()), 4}}
		var st datasets.Stats
		if global {
			st = bad.StandardizeGlobal()
		} else {
			st = bad.Standardize()
		}
		if bad.X[0] != 1 || bad.X[1] != 2 || bad.X[3] != 4 || !math.IsNaN(st.Mean[0]) {
			t.Errorf("global=%v: Standardize with a NaN changed the data to %v (stats %v)", global, bad.X, st)
		}
		wantErr(t, seq(2, 2, 1).Apply(st), "feature 0", "mean NaN")
	}
	if st := (&datasets.Dataset{}).Standardize(); len(st.Mean) != 0 {
		t.Error("Standardize of an empty dataset returned statistics")
	}
}

func meanStd(v []float64) (float64, float64) {
	var s, ss float64
	for _, x := range v {
		s += x
		ss += x * x
	}
	m := s / float64(len(v))
	return m, math.Sqrt(ss/float64(len(v)) - m*m)
}

func TestCloneIsDeep(t *testing.T) {
	d := seq(2, 2, 2)
	d.ClassNames = []string{"a", "b"}
	c := d.Clone()
	c.X[0], c.Labels[0], c.ClassNames[0] = 9, 1, "z"
	if d.X[0] != 0 || d.Labels[0] != 0 || d.ClassNames[0] != "a" {
		t.Error("Clone shares memory with the original")
	}
	if got := d.ClassCounts(); !slices.Equal(got, []int{1, 1}) {
		t.Errorf("ClassCounts = %v, want [1 1]", got)
	}
}
