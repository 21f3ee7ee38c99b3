package rng

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// RNG is a deterministic random number generator. It is not safe for
// concurrent use; give each goroutine its own stream.
type RNG struct {
	src      *rand.PCG
	spare    float64
	hasSpare bool
}

// New returns the stream named name of the generator seeded with seed.
func New(seed uint64, name string) *RNG {
	h := fnv.New64a()
	h.Write([]byte(name))
	return &RNG{src: rand.NewPCG(seed, h.Sum64())}
}

// Uint64 returns 64 uniformly random bits.
func (r *RNG) Uint64() uint64 { return r.src.Uint64() }

// Float64 returns a uniform sample from [0, 1) with 53 random bits.
func (r *RNG) Float64() float64 { return float64(r.src.Uint64()>>11) * 0x1p-53 }

// Uniform returns a uniform sample from [lo, hi).
func (r *RNG) Uniform(lo, hi float64) float64 { return lo + float64((hi-lo)*r.Float64()) }

// Normal returns a standard normal sample (Marsaglia's polar method).
func (r *RNG) Normal() float64 {
	if r.hasSpare {
		r.hasSpare = false
		return r.spare
	}
	for {
		u := float64(2*r.Float64()) - 1
		v := float64(2*r.Float64()) - 1
		s := float64(float64(u*u) + float64(v*v))
		if s == 0 || s >= 1 {
			continue
		}
		m := math.Sqrt(float64(-2*log(s)) / s) // Sqrt is correctly rounded everywhere
		r.spare, r.hasSpare = float64(v*m), true
		return float64(u * m)
	}
}

// IntN returns a uniform sample from [0, n); n must be positive.
// It uses Lemire's multiply-and-reject method, so it is unbiased.
func (r *RNG) IntN(n int) int {
	if n <= 0 {
		panic("rng: IntN with n <= 0") // a programming error, like rand.IntN
	}
	bound := uint64(n)
	for {
		hi, lo := mul64(r.src.Uint64(), bound)
		if lo >= bound || lo >= (-bound)%bound {
			return int(hi)
		}
	}
}

// Shuffle permutes n elements with the Fisher–Yates algorithm.
func (r *RNG) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.IntN(i+1))
	}
}

// Perm returns a random permutation of [0, n); n must not be negative (a
// programming error that panics, like rand.Perm). It allocates n ints:
// callers with untrusted n check it first (datasets.SplitIndices does).
func (r *RNG) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

func mul64(a, b uint64) (hi, lo uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1, w2 := t&mask32, t>>32
	w1 += a0 * b1
	return a1*b1 + w2 + w1>>32, a * b
}

// ln2Hi + ln2Lo = ln 2 to about 2⁻¹⁰⁶; ln2Hi has trailing zero bits so that
// k·ln2Hi is exact for |k| < 2¹¹.
const (
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

// log returns ln(x) for x in (0, 1], to about 1 ulp, using only explicitly
// rounded operations: x = m·2ᵏ with m in [√½, √2), ln m = 2·atanh(s),
// s = (m−1)/(m+1), |s| < 0.172, summed as an odd series.
func log(x float64) float64 {
	m, k := math.Frexp(x) // m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		k--
	}
	s := float64(float64(m-1) / float64(m+1))
	s2 := float64(s * s)
	// atanh(s)/s = Σ s²ʲ/(2j+1); s²¹⁴ < 1e-20 after 11 terms.
	sum := 0.0
	for j := 11; j >= 1; j-- {
		sum = float64(float64(sum*s2) + 1/float64(2*j+1))
	}
	sum = float64(sum * s2)
	lnm := float64(2*s) + float64(float64(2*s)*sum)
	fk := float64(k)
	return float64(float64(fk*ln2Hi) + float64(lnm+float64(fk*ln2Lo)))
}
