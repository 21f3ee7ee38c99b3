package probe

// Momentum buffers: the two conventions, their stationary moments for
// independent gradients, shadow buffers fed the training gradients, and
// the comparison of measured buffer moments with the predictions.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

// Form is a momentum convention of optim.SGD.
type Form int

const (
	// EMA is m ← β·m + (1 − β)·g (optim.SGD with Dampening = Momentum = β).
	EMA Form = iota
	// HeavyBall is m ← β·m + g (Dampening = 0, PyTorch's default).
	HeavyBall
)

// String returns "ema" or "heavy_ball".
func (f Form) String() string {
	switch f {
	case EMA:
		return "ema"
	case HeavyBall:
		return "heavy_ball"
	}
	return fmt.Sprintf("Form(%d)", int(f))
}

func checkMomentum(who string, f Form, beta float64) error {
	if f != EMA && f != HeavyBall {
		return fmt.Errorf("%s: unknown momentum form %d, want probe.EMA or probe.HeavyBall", who, int(f))
	}
	if !(beta >= 0 && beta < 1) {
		return fmt.Errorf("%s: β = %v, want 0 ≤ β < 1", who, beta)
	}
	return nil
}

// VarFactor returns Var(m)/σ² for the stationary buffer fed independent
// gradients of variance σ²: (1 − β)/(1 + β) for EMA, 1/(1 − β²) for
// HeavyBall. (m_t is a weighted sum Σ_k c·β^k·g_{t−k} with c = 1 − β or 1,
// so Var(m) = c²σ²/(1 − β²).) NaN for a bad form or β ∉ [0, 1).
func VarFactor(f Form, beta float64) float64 {
	if checkMomentum("", f, beta) != nil {
		return math.NaN()
	}
	if f == EMA {
		return (1 - beta) / (1 + beta)
	}
	return 1 / (1 - beta*beta)
}

// MeanFactor returns E[m]/μ for the stationary buffer fed gradients of
// mean μ: 1 for EMA, 1/(1 − β) for HeavyBall.
func MeanFactor(f Form, beta float64) float64 {
	if checkMomentum("", f, beta) != nil {
		return math.NaN()
	}
	if f == EMA {
		return 1
	}
	return 1 / (1 - beta)
}

// BurnIn returns the number of steps after which β^t ≤ eps: the remaining
// weight of the buffer's start (PyTorch sets m = g at the first step), so
// that the buffer's mean and variance are within a relative eps of their
// stationary values (the variance's transient decays as β^(2t), faster).
func BurnIn(beta, eps float64) int {
	if !(beta > 0 && beta < 1) || !(eps > 0 && eps < 1) {
		return 0
	}
	return int(math.Ceil(math.Log(eps) / math.Log(beta)))
}

// WindowFactor returns the expected ratio of the sample variance (divisor
// n − 1, around the sample mean) of n consecutive values of a stationary
// series with autocorrelation β^k to the series' variance:
//
//	(n − S/n)/(n − 1),   S = Σ_{s,t=1..n} β^|s−t|
//
// A buffer fed independent gradients is such a series (an AR(1) process
// with coefficient β), so its window variance is expected to be
// VarFactor·σ²·WindowFactor(β, n): a strongly autocorrelated series
// wanders around its mean for about (1+β)/(1−β) steps, and a window's
// own mean absorbs part of that. For β = 0.99 and n = 4000 the factor is
// about 0.95. 1 for β = 0; NaN for n < 2.
func WindowFactor(beta float64, n int) float64 {
	if n < 2 || !(beta >= 0 && beta < 1) {
		return math.NaN()
	}
	// S = n + 2·Σ_{k=1}^{n−1} (n − k)·β^k
	var s, p float64 = float64(n), 1
	for k := 1; k < n; k++ {
		p *= beta
		if p == 0 {
			break
		}
		s += 2 * float64(n-k) * p
	}
	fn := float64(n)
	return (fn - s/fn) / (fn - 1)
}

// Shadow is a momentum buffer that sees the same gradients as training but
// never moves the model: an optim.SGD with learning rate 0 stepping
// private zero copies of the parameters, so its buffer follows optim.SGD's
// exact update (including PyTorch's first step, m = g).
type Shadow struct {
	Form   Form
	Beta   float64
	opt    *optim.SGD
	params []graph.NamedTensor
}

// NewShadow returns a fresh shadow buffer of the given form and β for
// parameters shaped like params (their values are not touched).
func NewShadow(f Form, beta float64, params []graph.NamedTensor) (*Shadow, error) {
	if err := checkMomentum("probe.NewShadow", f, beta); err != nil {
		return nil, err
	}
	if beta == 0 {
		return nil, fmt.Errorf("probe.NewShadow: β = 0 keeps no buffer")
	}
	s := &Shadow{Form: f, Beta: beta, opt: &optim.SGD{LearningRate: 0, Momentum: beta}}
	if f == EMA {
		s.opt.Dampening = beta
	}
	for _, p := range params {
		if p.Value == nil {
			return nil, fmt.Errorf("probe.NewShadow: %q has no value", p.Name)
		}
		s.params = append(s.params, graph.NamedTensor{Name: p.Name, Value: tensor.New(tensor.Of(p.Value.Dtype()), tensor.WithShape(p.Value.Shape().Clone()...))})
	}
	return s, nil
}

// Step feeds one gradient per parameter (optim.Optimizer.Step's rules).
func (s *Shadow) Step(grads []*tensor.Dense) error {
	if s == nil {
		return fmt.Errorf("probe.Shadow.Step: nil Shadow (use NewShadow)")
	}
	if err := s.opt.Step(s.params, grads); err != nil {
		return fmt.Errorf("probe.Shadow %s β=%v: %w", s.Form, s.Beta, err)
	}
	return nil
}

// Buffers returns the live buffers, one per parameter (nil before the
// first Step).
func (s *Shadow) Buffers() []*tensor.Dense { return s.opt.MomentumBuffers() }

// Comparison sets the measured moments of a momentum buffer against the
// predictions from the moments of the gradients that fed it, summed over
// elements (Var is Σ_j Var, and so on).
type Comparison struct {
	Form Form
	Beta float64
	N    int // observations in the window

	GradVar    float64 // Σ_j Var(g_j)
	GradMeanSq float64 // Σ_j mean(g_j)²
	BufVar     float64 // Σ_j Var(m_j)

	// Ratio is BufVar/GradVar; RatioSE its batch-means standard error
	// (the spread of the per-block ratios over √blocks; NaN with fewer
	// than 2 blocks).
	Ratio, RatioSE float64
	// Blocks holds the ratio within each block (both variances around the
	// whole-window means): its spread gives RatioSE, its course over the
	// window shows drift.
	Blocks []float64
	// Predicted is VarFactor(Form, Beta), the stationary Var(m)/σ² for
	// independent gradients; Expected is Predicted·WindowFactor(Beta, N),
	// what a window of N steps is expected to measure under the same
	// assumption.
	Predicted, Expected float64
	// SecondMomentRatio is BufVar/((1−β)/(1+β)·Σ_j E[g_j²]) with
	// E[g²] = Var + mean²: the measurement against the EMA factor applied
	// to the second moment instead of the variance.
	SecondMomentRatio float64
	// MeanSlope is Σ_j mean(m_j)·mean(g_j) / Σ_j mean(g_j)², to compare
	// with MeanFactor(Form, Beta).
	MeanSlope float64
	// GradLag1 and BufLag1 are the variance-weighted lag-1
	// autocorrelations of g and m: 0 and β for independent gradients.
	GradLag1, BufLag1 float64
}

// Z is (Ratio − Expected)/RatioSE: how many standard errors the measured
// ratio is from what independent gradients would give.
func (c Comparison) Z() float64 { return (c.Ratio - c.Expected) / c.RatioSE }

// Compare compares the buffer moments m with the gradient moments g over
// tensor i (−1: all tensors). g and m must have seen the same steps.
func Compare(g, m *Moments, i int, f Form, beta float64) (Comparison, error) {
	if err := checkMomentum("probe.Compare", f, beta); err != nil {
		return Comparison{}, err
	}
	if g == nil || m == nil {
		return Comparison{}, fmt.Errorf("probe.Compare: nil moments")
	}
	if g.N() != m.N() || len(g.el) != len(m.el) || g.Blocks() != m.Blocks() {
		return Comparison{}, fmt.Errorf("probe.Compare: gradients have %d observations of %d elements in %d blocks, the buffer %d of %d in %d",
			g.N(), len(g.el), g.Blocks(), m.N(), len(m.el), m.Blocks())
	}
	tg, err := g.Total(i)
	if err != nil {
		return Comparison{}, err
	}
	tm, err := m.Total(i)
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{Form: f, Beta: beta, N: g.N(), GradVar: tg.Var, GradMeanSq: tg.MeanSq, BufVar: tm.Var,
		Ratio: tm.Var / tg.Var, RatioSE: math.NaN(), Predicted: VarFactor(f, beta),
		GradLag1: tg.Lag1 / tg.Var, BufLag1: tm.Lag1 / tm.Var}
	c.Expected = c.Predicted * WindowFactor(beta, c.N)
	c.SecondMomentRatio = tm.Var / ((1 - beta) / (1 + beta) * (tg.Var + tg.MeanSq))
	for b := range tg.Blocks {
		c.Blocks = append(c.Blocks, tm.Blocks[b]/tg.Blocks[b])
	}
	if k := len(c.Blocks); k >= 2 {
		var s, s2 float64
		for _, r := range c.Blocks {
			s += r
			s2 += r * r
		}
		mean := s / float64(k)
		c.RatioSE = math.Sqrt(math.Max(s2/float64(k)-mean*mean, 0) * float64(k) / float64(k-1) / float64(k))
	}
	var num, den float64
	for t := range g.names {
		if i != -1 && t != i {
			continue
		}
		mg, mm := g.Mean(t), m.Mean(t)
		for j := range mg {
			num += mm[j] * mg[j]
			den += mg[j] * mg[j]
		}
	}
	c.MeanSlope = num / den
	return c, nil
}
