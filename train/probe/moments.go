package probe

// Running per-element moments of a sequence of tensor lists (the gradients
// of every parameter at each step, or an optimizer's buffers), in float64,
// with the block sums needed for batch-means standard errors of summed
// variances and the lag-1 autocovariance.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// Moments accumulates, for every element j of a fixed list of tensors
// (parameters), the mean and variance of its values x_j(t) over the
// observations t = 1..n passed to Add, and their lag-1 autocovariance.
//
// Sums are kept relative to each element's first value, so a large mean
// (a heavy-ball buffer is 1/(1−β) times the gradient mean) does not cancel
// the variance away. Observations are also grouped into consecutive blocks
// of BlockLen: the summed variance of a tensor, recomputed within each
// block around the whole-run mean, gives a batch-means standard error for
// quantities built from it (see Compare). Memory is (4 + blocks) float64
// per element.
type Moments struct {
	names    []string
	offs     []int // tensor i owns elements offs[i]..offs[i+1]
	blockLen int
	n        int
	el       []elemSums
	blocks   []momentBlock
}

// elemSums are one element's running sums, kept together for locality.
type elemSums struct {
	shift  float64 // the element's first value
	s1, s2 float64 // Σ y, Σ y² with y = x − shift
	lag    float64 // Σ_{t≥2} y(t)·y(t−1)
	prev   float64 // y(n)
}

type momentBlock struct {
	n  int
	s1 []float64 // per element Σ y over the block
	q  []float64 // per tensor Σ y² over the block and the tensor's elements
}

// NewMoments starts moments for tensors shaped like params (their names and
// sizes; values are not read). blockLen > 0 groups observations into blocks
// of that many steps; 0 keeps no blocks (no standard errors).
func NewMoments(params []graph.NamedTensor, blockLen int) (*Moments, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("probe.NewMoments: no tensors")
	}
	if blockLen < 0 {
		return nil, fmt.Errorf("probe.NewMoments: block length %d, want ≥ 0", blockLen)
	}
	m := &Moments{blockLen: blockLen, offs: []int{0}}
	for _, p := range params {
		if p.Value == nil {
			return nil, fmt.Errorf("probe.NewMoments: %q has no value", p.Name)
		}
		m.names = append(m.names, p.Name)
		m.offs = append(m.offs, m.offs[len(m.offs)-1]+p.Value.Shape().TotalSize())
	}
	m.el = make([]elemSums, m.offs[len(m.offs)-1])
	return m, nil
}

// Names returns the tensors' names, in order (nil for a nil Moments).
func (m *Moments) Names() []string {
	if m == nil {
		return nil
	}
	return append([]string(nil), m.names...)
}

// N returns the number of observations (0 for a nil Moments).
func (m *Moments) N() int {
	if m == nil {
		return 0
	}
	return m.n
}

// Blocks returns the number of blocks begun so far (the last may be
// incomplete).
func (m *Moments) Blocks() int {
	if m == nil {
		return 0
	}
	return len(m.blocks)
}

// Add records one observation: ts[i] holds the values of tensor i (float32
// or float64, as many elements as the tensor NewMoments was given). A NaN
// or ±Inf value is an error, and then nothing is recorded.
func (m *Moments) Add(ts []*tensor.Dense) error {
	if m == nil {
		return fmt.Errorf("probe.Moments.Add: nil Moments (use NewMoments)")
	}
	if len(ts) != len(m.names) {
		return fmt.Errorf("probe.Moments.Add: %d tensors, want %d", len(ts), len(m.names))
	}
	for i, t := range ts {
		size := m.offs[i+1] - m.offs[i]
		if t == nil || t.Shape().TotalSize() != size {
			return fmt.Errorf("probe.Moments.Add: tensor %d (%q) is missing or has the wrong size, want %d elements", i, m.names[i], size)
		}
		j, n := 0, 0
		switch d := t.Data().(type) {
		case []float32:
			j, n = firstNonFinite(d), len(d)
		case []float64:
			j, n = firstNonFinite(d), len(d)
		default:
			return fmt.Errorf("probe.Moments.Add: %q is %v, want float32 or float64", m.names[i], t.Dtype())
		}
		if n != size {
			return fmt.Errorf("probe.Moments.Add: %q holds %d values for %d elements; pass a materialized tensor, not a view", m.names[i], n, size)
		}
		if j >= 0 {
			return fmt.Errorf("probe.Moments.Add: %q element %d is not finite", m.names[i], j)
		}
	}
	if m.blockLen > 0 && (len(m.blocks) == 0 || m.blocks[len(m.blocks)-1].n == m.blockLen) {
		m.blocks = append(m.blocks, momentBlock{s1: make([]float64, len(m.el)), q: make([]float64, len(m.names))})
	}
	var blk *momentBlock
	if len(m.blocks) > 0 {
		blk = &m.blocks[len(m.blocks)-1]
		blk.n++
	}
	for i, t := range ts {
		var q float64
		switch d := t.Data().(type) {
		case []float32:
			q = m.add32(d, m.offs[i], blk)
		case []float64:
			q = m.add64(d, m.offs[i], blk)
		}
		if blk != nil {
			blk.q[i] += q
		}
	}
	m.n++
	return nil
}

func (m *Moments) span(i int) (lo, hi int, ok bool) {
	if m == nil || i < 0 || i >= len(m.names) {
		return 0, 0, false
	}
	return m.offs[i], m.offs[i+1], true
}

// Mean returns the per-element means of tensor i (nil if i is out of
// range; NaN before any observation).
func (m *Moments) Mean(i int) []float64 {
	lo, hi, ok := m.span(i)
	if !ok {
		return nil
	}
	out := make([]float64, hi-lo)
	for j := range out {
		out[j] = m.el[lo+j].shift + m.el[lo+j].s1/float64(m.n)
	}
	return out
}

// Var returns the per-element sample variances of tensor i, with divisor
// n − 1 (unbiased for independent observations; NaN for n < 2).
func (m *Moments) Var(i int) []float64 {
	lo, hi, ok := m.span(i)
	if !ok {
		return nil
	}
	out := make([]float64, hi-lo)
	n := float64(m.n)
	for j := range out {
		e := m.el[lo+j]
		out[j] = math.Max(e.s2-e.s1*e.s1/n, 0) / (n - 1)
	}
	return out
}

// Totals are sums over the elements of one tensor (or of all tensors).
type Totals struct {
	Var    float64 // Σ_j Var(x_j), divisor n − 1
	MeanSq float64 // Σ_j mean(x_j)²
	// Lag1 is Σ_j of the lag-1 autocovariance (1/(n−1))·Σ_t (x_j(t) − x̄_j)(x_j(t−1) − x̄_j);
	// Lag1/Var is the variance-weighted lag-1 autocorrelation.
	Lag1 float64
	// Blocks holds Σ_j (1/L)·Σ_{t in block} (x_j(t) − x̄_j)² for each block
	// of length L, centred on the whole-run mean x̄_j; their mean is
	// Var·(n−1)/n when all blocks are complete.
	Blocks   []float64
	Elements int
}

// Total returns the sums over the elements of tensor i; i = −1 sums over
// all tensors.
func (m *Moments) Total(i int) (Totals, error) {
	if m == nil {
		return Totals{}, fmt.Errorf("probe.Moments.Total: nil Moments (use NewMoments)")
	}
	lo, hi := 0, len(m.el)
	tensors := []int{}
	if i != -1 {
		var ok bool
		if lo, hi, ok = m.span(i); !ok {
			return Totals{}, fmt.Errorf("probe.Moments.Total: tensor %d, want −1 or 0 ≤ i < %d", i, len(m.names))
		}
		tensors = append(tensors, i)
	} else {
		for t := range m.names {
			tensors = append(tensors, t)
		}
	}
	if m.n < 2 {
		return Totals{}, fmt.Errorf("probe.Moments.Total: %d observations, want at least 2", m.n)
	}
	n := float64(m.n)
	t := Totals{Elements: hi - lo, Blocks: make([]float64, len(m.blocks))}
	var cross = make([]float64, len(m.blocks)) // Σ_j ȳ_j·(block Σ y_j)
	var sumYbar2 float64
	for k := lo; k < hi; k++ {
		e := m.el[k]
		ybar := e.s1 / n
		t.Var += math.Max(e.s2-e.s1*ybar, 0) / (n - 1)
		mean := e.shift + ybar
		t.MeanSq += mean * mean
		// Σ_{t≥2} (y_t − ȳ)(y_{t−1} − ȳ) with y_1 = 0 by the shift.
		t.Lag1 += (e.lag - ybar*(e.s1+e.s1-e.prev) + (n-1)*ybar*ybar) / (n - 1)
		sumYbar2 += ybar * ybar
		for b := range m.blocks {
			cross[b] += ybar * m.blocks[b].s1[k]
		}
	}
	for b, blk := range m.blocks {
		var q float64
		for _, ti := range tensors {
			q += blk.q[ti]
		}
		L := float64(blk.n)
		t.Blocks[b] = (q - 2*cross[b] + L*sumYbar2) / L
	}
	return t, nil
}

func (m *Moments) add32(d []float32, off int, blk *momentBlock) float64 { return addTo(m, d, off, blk) }
func (m *Moments) add64(d []float64, off int, blk *momentBlock) float64 { return addTo(m, d, off, blk) }

// addTo adds one tensor's values (elements off, off+1, ...) and returns
// their Σ y² for the block. At the first observation the shift is set to
// the value itself, so y = 0 and every sum stays 0.
func addTo[T float32 | float64](m *Moments, d []T, off int, blk *momentBlock) float64 {
	el := m.el[off : off+len(d)]
	if m.n == 0 {
		for j, v := range d {
			el[j].shift = float64(v)
		}
		return 0
	}
	if blk == nil {
		for j, v := range d {
			el[j].add(float64(v))
		}
		return 0
	}
	var q float64
	bs := blk.s1[off : off+len(d)]
	for j, v := range d {
		y := el[j].add(float64(v))
		bs[j] += y
		q += y * y
	}
	return q
}

// add observes the value x and returns its y = x − shift.
func (e *elemSums) add(x float64) float64 {
	y := x - e.shift
	e.s1 += y
	e.s2 += y * y
	e.lag += y * e.prev
	e.prev = y
	return y
}

func firstNonFinite[T float32 | float64](d []T) int {
	for j, v := range d {
		if v-v != 0 { // NaN and ±Inf only
			return j
		}
	}
	return -1
}
