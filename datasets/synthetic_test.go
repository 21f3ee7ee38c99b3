package datasets_test

import (
	"math"
	"slices"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

// gelu is x·Φ(x), written here rather than imported from ops.
func gelu(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }

func TestSpiralsLieOnTheirCurves(t *testing.T) {
	const per, classes, turns = 50, 3, 1.5
	d, err := datasets.Spirals(datasets.SpiralsConfig{PerClass: per, Classes: classes, Turns: turns, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != per*classes || d.Features != 2 || d.Classes != classes {
		t.Fatalf("%d×%d with %d classes", d.Len(), d.Features, d.Classes)
	}
	for c := range classes {
		// Arm c is arm 0 rotated by 2πc/classes.
		s, co := math.Sincos(2 * math.Pi * float64(c) / classes)
		for i := range per {
			t0 := (float64(i) + 0.5) / per
			x0, y0 := t0*math.Cos(2*math.Pi*turns*t0), t0*math.Sin(2*math.Pi*turns*t0)
			wx, wy := co*x0-s*y0, s*x0+co*y0
			k := c*per + i
			if d.Labels[k] != c || math.Abs(float64(d.X[2*k])-wx) > 1e-6 || math.Abs(float64(d.X[2*k+1])-wy) > 1e-6 {
				t.Fatalf("point %d of arm %d: (%v, %v) label %d, want (%v, %v) label %d",
					i, c, d.X[2*k], d.X[2*k+1], d.Labels[k], wx, wy, c)
			}
		}
	}
}

func TestSpiralsNoiseStatistics(t *testing.T) {
	const per, sigma = 5000, 0.1
	cfg := datasets.SpiralsConfig{PerClass: per, Noise: sigma, Seed: 4}
	noisy, err := datasets.Spirals(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Noise = 0
	clean, _ := datasets.Spirals(cfg)
	if noisy.Classes != 2 || !slices.Equal(noisy.ClassCounts(), []int{per, per}) {
		t.Fatalf("default spirals: %d classes, counts %v", noisy.Classes, noisy.ClassCounts())
	}
	var res []float64
	for k := range noisy.X {
		res = append(res, float64(noisy.X[k])-float64(clean.X[k]))
	}
	n := float64(len(res))
	m, s := meanStd(res)
	if math.Abs(m) > 5*sigma/math.Sqrt(n) || math.Abs(s-sigma) > 5*sigma/math.Sqrt(2*n) {
		t.Errorf("noise mean %v, std %v; want 0, %v", m, s, sigma)
	}
	again, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: per, Noise: sigma, Seed: 4})
	other, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: per, Noise: sigma, Seed: 5})
	if !slices.Equal(noisy.X, again.X) || slices.Equal(noisy.X, other.X) {
		t.Error("spirals are not a deterministic function of the seed")
	}
	_, err = datasets.Spirals(datasets.SpiralsConfig{PerClass: 0})
	wantErr(t, err, "0 points per class")
	_, err = datasets.Spirals(datasets.SpiralsConfig{PerClass: 3, Noise: -1})
	wantErr(t, err, "noise -1")
}

func TestBlobsStatistics(t *testing.T) {
	const per, classes, features, std = 4000, 3, 4, 0.5
	d, centers, err := datasets.Blobs(datasets.BlobsConfig{PerClass: per, Classes: classes, Features: features, Std: std, CenterBox: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != per*classes || len(centers) != classes || d.Features != features {
		t.Fatalf("%d examples, %d centers", d.Len(), len(centers))
	}
	for c, mu := range centers {
		for j, m := range mu {
			if math.Abs(m) > 3 {
				t.Errorf("center %d[%d] = %v outside [-3, 3]", c, j, m)
			}
			var col []float64
			for i := range per {
				k := c*per + i
				if d.Labels[k] != c {
					t.Fatalf("example %d has label %d, want %d", k, d.Labels[k], c)
				}
				col = append(col, float64(d.X[k*features+j]))
			}
			mean, s := meanStd(col)
			if math.Abs(mean-m) > 5*std/math.Sqrt(per) || math.Abs(s-std) > 5*std/math.Sqrt(2*per) {
				t.Errorf("class %d feature %d: mean %v std %v, want %v and %v", c, j, mean, s, m, std)
			}
		}
	}
	d2, c2, _ := datasets.Blobs(datasets.BlobsConfig{PerClass: per, Classes: classes, Features: features, Std: std, CenterBox: 3, Seed: 2})
	_, c3, _ := datasets.Blobs(datasets.BlobsConfig{PerClass: per, Classes: classes, Features: features, Std: std, CenterBox: 3, Seed: 3})
	if !slices.Equal(d.X, d2.X) || !slices.Equal(c2[0], centers[0]) || slices.Equal(c3[0], centers[0]) {
		t.Error("blobs are not a deterministic function of the seed")
	}
	_, _, err = datasets.Blobs(datasets.BlobsConfig{PerClass: 1, Classes: 1, Features: 0})
	wantErr(t, err, "0 features")
	_, _, err = datasets.Blobs(datasets.BlobsConfig{PerClass: 1, Classes: 1, Features: 1, Std: -1})
	wantErr(t, err, "std -1")
}

// refForward evaluates the teacher column by column (a different
// summation order from Teacher.Forward).
func refForward(tc *datasets.Teacher, act func(float64) float64, x []float64) []float64 {
	h := x
	for l, w := range tc.Weights {
		in, out := tc.Sizes[l], tc.Sizes[l+1]
		acc := make([]float64, out)
		for i := in - 1; i >= 0; i-- {
			for o := range out {
				acc[o] += w[o*in+i] * h[i]
			}
		}
		for o := range acc {
			acc[o] += tc.Biases[l][o]
			if l < len(tc.Weights)-1 {
				acc[o] = act(acc[o])
			}
		}
		h = acc
	}
	return h
}

func TestTeacherTargets(t *testing.T) {
	cfg := datasets.TeacherConfig{Sizes: []int{3, 16, 8, 2}, Act: gelu, BiasStd: 0.1, Seed: 7}
	tc, err := datasets.NewTeacher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	clean, err := tc.Sample(n, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if clean.Len() != n || clean.TargetDim != 2 || clean.Labels != nil {
		t.Fatalf("sample %d×%d, target dim %d", clean.Len(), clean.Features, clean.TargetDim)
	}
	x := make([]float64, 3)
	for e := range n {
		for i := range x {
			x[i] = float64(clean.X[e*3+i])
		}
		want := refForward(tc, gelu, x)
		for o, w := range want {
			// Targets are the float64 outputs rounded to float32.
			if got := float64(clean.Targets[e*2+o]); math.Abs(got-w) > 1e-7*math.Abs(w)+1e-12 {
				t.Fatalf("example %d output %d: %v, want %v", e, o, got, w)
			}
		}
	}
	// Inputs are N(0, I).
	for i := range 3 {
		for j := i; j < 3; j++ {
			var s, si float64
			for e := range n {
				s += float64(clean.X[e*3+i]) * float64(clean.X[e*3+j])
				si += float64(clean.X[e*3+i])
			}
			want, tol := 0.0, 5/math.Sqrt(n)
			if i == j {
				want, tol = 1, 5*math.Sqrt(2.0/n)
			}
			if math.Abs(s/n-want) > tol || math.Abs(si/n) > 5/math.Sqrt(n) {
				t.Errorf("E[x%d·x%d] = %v, E[x%d] = %v; want %v, 0", i, j, s/n, i, si/n, want)
			}
		}
	}
	// Noise: same inputs (its own stream), residual N(0, σ²).
	const sigma = 0.3
	noisy, _ := tc.Sample(n, sigma, 1)
	if !slices.Equal(noisy.X, clean.X) {
		t.Error("adding noise changed the inputs")
	}
	var res []float64
	for k := range noisy.Targets {
		res = append(res, float64(noisy.Targets[k])-float64(clean.Targets[k]))
	}
	m, s := meanStd(res)
	if nr := float64(len(res)); math.Abs(m) > 5*sigma/math.Sqrt(nr) || math.Abs(s-sigma) > 5*sigma/math.Sqrt(2*nr) {
		t.Errorf("noise mean %v std %v, want 0 and %v", m, s, sigma)
	}
	tc2, _ := datasets.NewTeacher(cfg)
	other, _ := tc.Sample(10, 0, 2)
	if !slices.Equal(tc2.Weights[1], tc.Weights[1]) || slices.Equal(other.X, clean.X[:30]) {
		t.Error("teacher and samples are not deterministic functions of their seeds")
	}
}

func TestTeacherWeightScale(t *testing.T) {
	tc, err := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{400, 300}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m, s := meanStd(tc.Weights[0])
	n := float64(len(tc.Weights[0]))
	if want := 1 / math.Sqrt(400); math.Abs(m) > 5*want/math.Sqrt(n) || math.Abs(s-want) > 5*want/math.Sqrt(2*n) {
		t.Errorf("weights mean %v std %v, want 0 and %v", m, s, want)
	}
	if slices.ContainsFunc(tc.Biases[0], func(b float64) bool { return b != 0 }) {
		t.Error("BiasStd 0 gave non-zero biases")
	}
}

// A linear teacher is recovered exactly by least squares on its samples.
func TestLinearTeacherLeastSquares(t *testing.T) {
	tc, _ := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{4, 1}, BiasStd: 0, Seed: 5})
	d, err := tc.Sample(500, 0, 6)
	if err != nil {
		t.Fatal(err)
	}
	// Normal equations XᵀX w = Xᵀy, solved by Gaussian elimination.
	var a [4][5]float64
	for e := range d.Len() {
		for i := range 4 {
			for j := range 4 {
				a[i][j] += float64(d.X[e*4+i]) * float64(d.X[e*4+j])
			}
			a[i][4] += float64(d.X[e*4+i]) * float64(d.Targets[e])
		}
	}
	for p := range 4 {
		for r := p + 1; r < 4; r++ {
			f := a[r][p] / a[p][p]
			for c := p; c < 5; c++ {
				a[r][c] -= f * a[p][c]
			}
		}
	}
	var w [4]float64
	for p := 3; p >= 0; p-- {
		s := a[p][4]
		for c := p + 1; c < 4; c++ {
			s -= a[p][c] * w[c]
		}
		w[p] = s / a[p][p]
	}
	for i := range 4 {
		if math.Abs(w[i]-tc.Weights[0][i]) > 1e-6 {
			t.Errorf("least-squares weight %d = %v, teacher has %v", i, w[i], tc.Weights[0][i])
		}
	}
}

func TestTeacherErrors(t *testing.T) {
	_, err := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{3}})
	wantErr(t, err, "sizes [3]")
	_, err = datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{3, 0, 1}, Act: gelu})
	wantErr(t, err, "want all > 0")
	_, err = datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{3, 4, 1}})
	wantErr(t, err, "Act is nil")
	tc, _ := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{2, 3, 1}, Act: func(float64) float64 { return math.NaN() }})
	_, err = tc.Sample(4, 0, 1)
	wantErr(t, err, "Targets[0]", "NaN")
	_, err = tc.Forward([]float64{1})
	wantErr(t, err, "1 inputs, want 2")
	_, err = tc.Sample(0, 0, 1)
	wantErr(t, err, "n = 0")
	tc.Weights = tc.Weights[:1]
	_, err = tc.Forward([]float64{1, 2})
	wantErr(t, err, "inconsistent teacher")
}
