package rng

import (
	"math"
	"testing"
)

func TestLogMatchesMathLog(t *testing.T) {
	r := New(1, "log")
	worst := 0.0
	for i := 0; i < 200000; i++ {
		x := r.Float64()
		if x == 0 {
			continue
		}
		got, want := log(x), math.Log(x)
		if rel := math.Abs(got-want) / math.Abs(want); rel > worst && want != 0 {
			worst = rel
		}
	}
	for _, x := range []float64{1, 0.5, 1e-300, 0.999999999} {
		if got, want := log(x), math.Log(x); math.Abs(got-want) > 4e-16*math.Abs(want) {
			t.Errorf("log(%v) = %v, want %v", x, got, want)
		}
	}
	// math.Log on amd64 is wrong for subnormals (it returns -709.09 here), so
	// the smallest subnormal 2⁻¹⁰⁷⁴ is checked against -1074·ln 2 instead.
	if got, want := log(math.SmallestNonzeroFloat64), -1074*math.Ln2; math.Abs(got-want) > 4e-16*math.Abs(want) {
		t.Errorf("log(2^-1074) = %v, want %v", got, want)
	}
	if worst > 4e-16 {
		t.Errorf("worst relative error of log against math.Log: %g", worst)
	}
}

func TestNormalMoments(t *testing.T) {
	r := New(7, "normal")
	const n = 400000
	var s1, s2, s4 float64
	for i := 0; i < n; i++ {
		z := r.Normal()
		s1 += z
		s2 += z * z
		s4 += z * z * z * z
	}
	mean, variance, kurt := s1/n, s2/n, s4/n
	// Standard errors: 1/√n for the mean, √(2/n) for the variance, √(96/n) for E[z⁴].
	if math.Abs(mean) > 5/math.Sqrt(n) || math.Abs(variance-1) > 5*math.Sqrt(2.0/n) || math.Abs(kurt-3) > 5*math.Sqrt(96.0/n) {
		t.Errorf("moments mean %v, variance %v, E[z^4] %v; want 0, 1, 3", mean, variance, kurt)
	}
}

func TestStreamsAreDeterministicAndDistinct(t *testing.T) {
	a, b, c := New(3, "w"), New(3, "w"), New(3, "b")
	same, differs := true, false
	for i := 0; i < 100; i++ {
		x, y, z := a.Normal(), b.Normal(), c.Normal()
		same = same && x == y
		differs = differs || x != z
	}
	if !same || !differs {
		t.Errorf("same seed and name must repeat (%v), other names must differ (%v)", same, differs)
	}
}

func TestIntNUniform(t *testing.T) {
	r := New(5, "int")
	const n, draws = 7, 70000
	var counts [n]int
	for i := 0; i < draws; i++ {
		counts[r.IntN(n)]++
	}
	for v, c := range counts {
		// Binomial(draws, 1/7): sd ≈ 92.6.
		if math.Abs(float64(c)-draws/n) > 5*92.6 {
			t.Errorf("IntN(%d): value %d drawn %d times, want about %d", n, v, c, draws/n)
		}
	}
	p := r.Perm(10)
	seen := map[int]bool{}
	for _, v := range p {
		seen[v] = true
	}
	if len(seen) != 10 {
		t.Errorf("Perm(10) = %v is not a permutation", p)
	}
}
