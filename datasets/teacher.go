package datasets

// Teacher–student regression: targets produced by a fixed random network,
// so that a student's capacity and activation can be studied against a
// known target function.

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/geluproject/gelu/graph/rng"
)

// TeacherConfig configures NewTeacher.
type TeacherConfig struct {
	// Sizes are the layer widths from input to output, e.g. {10, 32, 32, 1}.
	Sizes []int
	// Act is the hidden activation, e.g. activation.GELU.F; the output is linear.
	Act func(float64) float64
	// BiasStd is the standard deviation of the biases (0: no biases).
	BiasStd float64
	Seed    uint64
}

// Teacher is a fixed fully connected network: h ← Act(W·h + b) for each
// hidden layer, then y = W·h + b. Weights[l] is Sizes[l+1]×Sizes[l],
// row-major (PyTorch's out×in layout), drawn from N(0, 1/Sizes[l]) so that
// the pre-activations stay of order one; Biases[l] has Sizes[l+1] entries
// from N(0, BiasStd²).
type Teacher struct {
	Sizes   []int
	Weights [][]float64
	Biases  [][]float64
	Act     func(float64) float64
}

// NewTeacher draws a teacher network. Layer l's weights come from the
// stream rng.New(Seed, "teacher.<l>.weight"), its biases from
// "teacher.<l>.bias".
func NewTeacher(cfg TeacherConfig) (*Teacher, error) {
	if len(cfg.Sizes) < 2 {
		return nil, fmt.Errorf("datasets.NewTeacher: sizes %v, want at least input and output widths", cfg.Sizes)
	}
	for _, s := range cfg.Sizes {
		if s <= 0 {
			return nil, fmt.Errorf("datasets.NewTeacher: sizes %v, want all > 0", cfg.Sizes)
		}
	}
	if cfg.Act == nil && len(cfg.Sizes) > 2 {
		return nil, fmt.Errorf("datasets.NewTeacher: sizes %v have hidden layers but Act is nil", cfg.Sizes)
	}
	if !(cfg.BiasStd >= 0) || math.IsInf(cfg.BiasStd, 0) {
		return nil, fmt.Errorf("datasets.NewTeacher: bias std %v, want finite and ≥ 0", cfg.BiasStd)
	}
	for l := range len(cfg.Sizes) - 1 {
		if _, err := elements(fmt.Sprintf("datasets.NewTeacher: layer %d weights", l), cfg.Sizes[l+1], cfg.Sizes[l]); err != nil {
			return nil, err
		}
	}
	t := &Teacher{Sizes: slices.Clone(cfg.Sizes), Act: cfg.Act}
	for l := range len(cfg.Sizes) - 1 {
		in, out := cfg.Sizes[l], cfg.Sizes[l+1]
		rw := rng.New(cfg.Seed, "teacher."+strconv.Itoa(l)+".weight")
		rb := rng.New(cfg.Seed, "teacher."+strconv.Itoa(l)+".bias")
		w, b := make([]float64, out*in), make([]float64, out)
		std := 1 / math.Sqrt(float64(in))
		for k := range w {
			w[k] = std * rw.Normal()
		}
		if cfg.BiasStd > 0 {
			for k := range b {
				b[k] = cfg.BiasStd * rb.Normal()
			}
		}
		t.Weights, t.Biases = append(t.Weights, w), append(t.Biases, b)
	}
	return t, nil
}

// Forward returns the teacher's output for one input, in float64.
func (t *Teacher) Forward(x []float64) (y []float64, err error) {
	defer func() {
		if r := recover(); r != nil { // from Act
			y, err = nil, fmt.Errorf("datasets.Teacher.Forward: %v", r)
		}
	}()
	if err := t.check(); err != nil {
		return nil, err
	}
	if len(x) != t.Sizes[0] {
		return nil, fmt.Errorf("datasets.Teacher.Forward: %d inputs, want %d", len(x), t.Sizes[0])
	}
	h := x
	last := len(t.Weights) - 1
	for l, w := range t.Weights {
		in, out := t.Sizes[l], t.Sizes[l+1]
		next := make([]float64, out)
		for o := range out {
			s := t.Biases[l][o]
			for i, v := range w[o*in : (o+1)*in] {
				s += v * h[i]
			}
			if l < last {
				s = t.Act(s)
			}
			next[o] = s
		}
		h = next
	}
	return h, nil
}

// check guards Forward and Sample against a nil Teacher and edits of the
// exported fields.
func (t *Teacher) check() error {
	if t == nil {
		return fmt.Errorf("datasets: nil Teacher (use NewTeacher)")
	}
	bad := len(t.Sizes) < 2 || len(t.Weights) != len(t.Sizes)-1 || len(t.Biases) != len(t.Weights) ||
		(t.Act == nil && len(t.Sizes) > 2)
	for l := 0; !bad && l < len(t.Weights); l++ {
		// Computed with an overflow check, so that sizes edited to wrap
		// around to the slice's length are still caught.
		w, err := elements("", t.Sizes[l], t.Sizes[l+1])
		bad = err != nil || t.Sizes[l] <= 0 || len(t.Weights[l]) != w || len(t.Biases[l]) != t.Sizes[l+1]
	}
	if bad {
		return fmt.Errorf("datasets.Teacher: inconsistent teacher: sizes %v do not match %d weight and %d bias layers (or Act is nil)",
			t.Sizes, len(t.Weights), len(t.Biases))
	}
	return nil
}

// Sample returns a regression dataset of n examples: inputs x ~ N(0, I)
// from rng.New(seed, "teacher.inputs"), rounded to float32, and targets
// Forward(x) + noise·z, z ~ N(0, I) from the stream "teacher.noise".
// The teacher sees exactly the float32 inputs stored in X. Draw the
// training and test sets with different seeds.
func (t *Teacher) Sample(n int, noise float64, seed uint64) (*Dataset, error) {
	if n <= 0 {
		return nil, fmt.Errorf("datasets.Teacher.Sample: n = %d, want > 0", n)
	}
	if !(noise >= 0) || math.IsInf(noise, 0) {
		return nil, fmt.Errorf("datasets.Teacher.Sample: noise %v, want finite and ≥ 0", noise)
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	in, out := t.Sizes[0], t.Sizes[len(t.Sizes)-1]
	if _, err := elements("datasets.Teacher.Sample", n, max(in, out)); err != nil {
		return nil, err
	}
	rx, rn := rng.New(seed, "teacher.inputs"), rng.New(seed, "teacher.noise")
	d := &Dataset{Name: "teacher", Features: in, X: make([]float32, n*in), TargetDim: out, Targets: make([]float32, n*out)}
	x := make([]float64, in)
	for e := range n {
		for i := range x {
			v := float32(rx.Normal())
			d.X[e*in+i], x[i] = v, float64(v)
		}
		y, err := t.Forward(x)
		if err != nil {
			return nil, err
		}
		for o, v := range y {
			d.Targets[e*out+o] = float32(v + noise*rn.Normal())
		}
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("datasets.Teacher.Sample: the teacher's outputs: %w", err)
	}
	return d, nil
}
