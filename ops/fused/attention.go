package fused

// Multi-head scaled dot-product attention as one op, reading the heads
// straight out of a fused q‖k‖v projection and writing them merged, so no
// transposes or copies of Q, K, V are made. For every batch entry b and head
// h, with Q, K, V the (T × d_h) blocks of head h:
//
//	forward   S = Q·Kᵀ/√d_h, masked to −∞ where j > i (causal) or where key
//	          j is padding;  P = softmax(S) per row;  P̃ = P ⊙ M (dropout
//	          mask M ∈ {0, 1/(1−p)}, a function of seed, name and step);
//	          O = P̃·V
//	backward  dV = P̃ᵀ·dO,  dP = (dO·Vᵀ) ⊙ M,
//	          dS = P ⊙ (dP − rowsum(dP ⊙ P)),
//	          dQ = dS·K/√d_h,  dK = dSᵀ·Q/√d_h
//
// The forward op keeps P (and P̃ and M when dropout is on) for the backward
// op: B·H·T² numbers each (and the backward op a scratch of that size).
// Products go through gemm.Gemm with leading dimensions that step over the
// other heads; the (batch, head) pairs are spread over cores by parallel. Double backward is not implemented: the backward op reports an
// error if it is differentiated.

import (
	"fmt"
	"math"
	"slices"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AttentionConfig describes ScaledDotProductAttention.
type AttentionConfig struct {
	Batch  int  // sequences in the input; the input has Batch·T rows
	Heads  int  // heads; d_h = d/Heads must be an integer
	Causal bool // token i attends to tokens j ≤ i only (GPT)
	// Dropout on the attention probabilities while mode.Training(); 0
	// disables it. Seed and Name select the random stream, as for Dropout.
	Dropout float64
	Seed    uint64
	Name    string
	Mode    Mode // read at every run; may be nil when Dropout is 0
}

// ScaledDotProductAttention returns the merged heads (Batch·T × d) of
// softmax(QKᵀ/√d_h + mask)·V for qkv (Batch·T × 3d), whose columns are
// q‖k‖v as nanoGPT's c_attn produces them (head h of q is columns
// h·d_h … (h+1)·d_h − 1). padMask, optional (nil), is (Batch × T) with 1 for
// a real key and 0 for padding; it gets no gradient. A query row whose keys
// are all masked gets output 0.
func ScaledDotProductAttention(qkv, padMask *G.Node, cfg AttentionConfig) (*G.Node, error) {
	const name = "fused.ScaledDotProductAttention"
	if err := opkit.CheckMatrix(name, "qkv", qkv); err != nil {
		return nil, err
	}
	rows, cols := qkv.Shape()[0], qkv.Shape()[1]
	if cfg.Batch <= 0 || cfg.Heads <= 0 {
		return nil, fmt.Errorf("%s %q: Batch = %d, Heads = %d, want both > 0", name, cfg.Name, cfg.Batch, cfg.Heads)
	}
	if cols%3 != 0 || (cols/3)%cfg.Heads != 0 {
		return nil, fmt.Errorf("%s %q: qkv %q has %d columns, want 3·d with d divisible by %d heads", name, cfg.Name, qkv.Name(), cols, cfg.Heads)
	}
	if rows%cfg.Batch != 0 {
		return nil, fmt.Errorf("%s %q: qkv %q has %d rows, want Batch·T with Batch = %d", name, cfg.Name, qkv.Name(), rows, cfg.Batch)
	}
	if !(cfg.Dropout >= 0 && cfg.Dropout < 1) {
		return nil, fmt.Errorf("%s %q: dropout p = %v, want 0 ≤ p < 1", name, cfg.Name, cfg.Dropout)
	}
	if cfg.Dropout > 0 && cfg.Mode == nil {
		return nil, fmt.Errorf("%s %q: dropout needs a Mode (training flag and step)", name, cfg.Name)
	}
	if padMask == nil {
		return opkit.Apply(newAttention(cfg, rows/cfg.Batch, cols/3, false), qkv)
	}
	op := newAttention(cfg, rows/cfg.Batch, cols/3, true)
	if err := opkit.CheckMatrix(name, "padding mask", padMask); err != nil {
		return nil, err
	}
	if padMask.Shape()[0] != cfg.Batch || padMask.Shape()[1] != op.t {
		return nil, fmt.Errorf("%s %q: padding mask %q has shape %v, want (%d, %d) (batch, T)", name, cfg.Name, padMask.Name(), padMask.Shape(), cfg.Batch, op.t)
	}
	if padMask.Dtype() != qkv.Dtype() {
		return nil, fmt.Errorf("%s %q: padding mask is %v but qkv is %v", name, cfg.Name, padMask.Dtype(), qkv.Dtype())
	}
	return opkit.Apply(op, qkv, padMask)
}

type attentionOp struct {
	opkit.Base
	cfg    AttentionConfig
	t, d   int // sequence length, model width
	masked bool
	out    opkit.Buffer
	// Saved for the backward op, B·H·T² each: the probabilities, and with
	// dropout the dropped probabilities and the mask.
	p, pd, mask opkit.Buffer
	dropped     bool // whether the last run applied dropout
	ran         bool
	k32         *attentionKernel[float32]
	k64         *attentionKernel[float64]
}

func newAttention(cfg AttentionConfig, t, d int, masked bool) *attentionOp {
	op := &attentionOp{cfg: cfg, t: t, d: d, masked: masked}
	name := fmt.Sprintf("attention(heads=%d", cfg.Heads)
	if cfg.Causal {
		name += ", causal"
	}
	if cfg.Dropout > 0 {
		name += fmt.Sprintf(", dropout=%g", cfg.Dropout)
	}
	op.Base = opkit.Base{
		Name:     name + ")",
		Key:      fmt.Sprintf("ops.attention(%d,%d,%t,%x,%d,%q,%p,%d,%d,%t)", cfg.Batch, cfg.Heads, cfg.Causal, math.Float64bits(cfg.Dropout), cfg.Seed, cfg.Name, cfg.Mode, t, d, masked),
		Dims:     []int{2, 2},
		WRT:      []bool{true},
		Backward: op.backward,
	}
	if masked { // the padding mask gets no gradient
		op.Dims, op.WRT = []int{2, 2, 2}, []bool{true, false}
	}
	return op
}

func (op *attentionOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], op.d}, nil
}

func (op *attentionOp) roles() []string { return []string{"qkv", "padding mask"}[:op.Arity()] }

// check validates the run-time inputs against the shapes the op was built for.
func (op *attentionOp) check(qkv, pad *tensor.Dense) error {
	b := op.cfg.Batch
	if qkv.Dims() != 2 || qkv.Shape()[0] != b*op.t || qkv.Shape()[1] != 3*op.d {
		return fmt.Errorf("%v: qkv has shape %v, want (%d, %d)", op, qkv.Shape(), b*op.t, 3*op.d)
	}
	if op.masked && (pad.Dims() != 2 || pad.Shape()[0] != b || pad.Shape()[1] != op.t || pad.Dtype() != qkv.Dtype()) {
		return fmt.Errorf("%v: padding mask is %v%v, want %v(%d, %d)", op, pad.Dtype(), pad.Shape(), qkv.Dtype(), b, op.t)
	}
	return nil
}

func (op *attentionOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, op.roles()...)
	if err != nil {
		return nil, err
	}
	qkv, pad := in[0], in[1]
	if err := op.check(qkv, pad); err != nil {
		return nil, err
	}
	dt := qkv.Dtype()
	probs := tensor.Shape{op.cfg.Batch * op.cfg.Heads, op.t, op.t}
	p := op.p.Get(dt, probs)
	op.dropped = op.cfg.Dropout > 0 && op.cfg.Mode.Training()
	var pd, mask *tensor.Dense
	if op.dropped {
		pd, mask = op.pd.Get(dt, probs), op.mask.Get(dt, probs)
	}
	out := op.out.Get(dt, tensor.Shape{op.cfg.Batch * op.t, op.d})
	k32, k64 := op.kernels()
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		attentionForward(k32, o, qkv.Float32s(), affineData[float32](pad), p.Float32s(), affineData[float32](pd), affineData[float32](mask))
	case tensor.Float64:
		o := out.Float64s()
		attentionForward(k64, o, qkv.Float64s(), affineData[float64](pad), p.Float64s(), affineData[float64](pd), affineData[float64](mask))
	}
	op.ran = true
	return out, nil
}

// heads returns the geometry shared by the forward and backward loops.
func (op *attentionOp) heads() (bh, t, d, dh int, scale float64) {
	dh = op.d / op.cfg.Heads
	return op.cfg.Batch * op.cfg.Heads, op.t, op.d, dh, 1 / math.Sqrt(float64(dh))
}

// attentionKernel runs the forward or backward pass over a range of
// (batch, head) pairs; parallel.For splits the pairs over cores. The op
// keeps one per dtype, so a training step allocates nothing here.
type attentionKernel[T graph.Float] struct {
	op                         *attentionOp
	backward                   bool
	out, qkv, pad, p, pd, mask []T // forward
	dqkv, g, w                 []T // backward (w: dP and dS, T² per pair)
}

func (k *attentionKernel[T]) Run(lo, hi int) {
	for i := lo; i < hi; i++ {
		if k.backward {
			k.backwardPair(i)
		} else {
			k.forwardPair(i)
		}
	}
}

func (k *attentionKernel[T]) forwardPair(i int) {
	op := k.op
	_, t, d, dh, scale := op.heads()
	b, h := i/op.cfg.Heads, i%op.cfg.Heads
	q := k.qkv[b*t*3*d+h*dh:]
	key, v := q[d:], q[2*d:]
	s := k.p[i*t*t : (i+1)*t*t]
	gemm.Gemm(false, true, t, t, dh, T(scale), q, 3*d, key, 3*d, 0, s, t)
	inf := T(math.Inf(-1))
	for r := 0; r < t; r++ {
		row := s[r*t : (r+1)*t]
		if op.cfg.Causal { // keys after r get probability 0 without an exp
			clear(row[r+1:])
			row = row[:r+1]
		}
		if k.pad != nil {
			for j, keep := range k.pad[b*t : b*t+len(row)] {
				if keep == 0 {
					row[j] = inf
				}
			}
		}
		SoftmaxRow(row, row)
	}
	probs := s
	if op.dropped {
		probs = k.pd[i*t*t : (i+1)*t*t]
		m := k.mask[i*t*t : (i+1)*t*t]
		for j, x := range s {
			probs[j] = x * m[j]
		}
	}
	gemm.Gemm(false, false, t, dh, t, 1, probs, t, v, 3*d, 0, k.out[b*t*d+h*dh:], d)
}

func (k *attentionKernel[T]) backwardPair(i int) {
	op := k.op
	_, t, d, dh, scale := op.heads()
	b, h := i/op.cfg.Heads, i%op.cfg.Heads
	off := b*t*3*d + h*dh
	q, key, v := k.qkv[off:], k.qkv[off+d:], k.qkv[off+2*d:]
	dq, dk, dv := k.dqkv[off:], k.dqkv[off+d:], k.dqkv[off+2*d:]
	do := k.g[b*t*d+h*dh:]
	p := k.p[i*t*t : (i+1)*t*t]
	w := k.w[i*t*t : (i+1)*t*t]
	probs := p
	if op.dropped {
		probs = k.pd[i*t*t : (i+1)*t*t]
	}
	gemm.Gemm(true, false, t, dh, t, 1, probs, t, do, d, 0, dv, 3*d)
	gemm.Gemm(false, true, t, t, dh, 1, do, d, v, 3*d, 0, w, t)
	if op.dropped {
		m := k.mask[i*t*t : (i+1)*t*t]
		for j := range w {
			w[j] *= m[j]
		}
	}
	for r := 0; r < t; r++ {
		wr := w[r*t : (r+1)*t]
		softmaxGradRow(wr, p[r*t:(r+1)*t], wr)
	}
	gemm.Gemm(false, false, t, dh, t, T(scale), w, t, key, 3*d, 0, dq, 3*d)
	gemm.Gemm(true, false, t, dh, t, T(scale), w, t, q, 3*d, 0, dk, 3*d)
}

// kernels returns the op's kernels for both dtypes, made on first use.
func (op *attentionOp) kernels() (*attentionKernel[float32], *attentionKernel[float64]) {
	if op.k32 == nil {
		op.k32, op.k64 = &attentionKernel[float32]{op: op}, &attentionKernel[float64]{op: op}
	}
	return op.k32, op.k64
}

func attentionForward[T graph.Float](k *attentionKernel[T], out, qkv, pad, p, pd, mask []T) {
	op := k.op
	if op.dropped {
		drawMask(mask, op.cfg.Dropout, rng.New(op.cfg.Seed, fmt.Sprintf("attention-dropout/%s/%d", streamName(op.cfg.Mode, op.cfg.Name), op.cfg.Mode.Step())))
	}
	k.backward = false
	k.out, k.qkv, k.pad, k.p, k.pd, k.mask = out, qkv, pad, p, pd, mask
	bh, _, _, _, _ := op.heads()
	parallel.For(bh, 1, k)
	k.out, k.qkv, k.pad, k.p, k.pd, k.mask = nil, nil, nil, nil, nil, nil
}

func drawMask[T graph.Float](mask []T, p float64, r *rng.RNG) {
	scale := T(1 / (1 - p))
	for j := range mask {
		mask[j] = 0
		if r.Float64() >= p {
			mask[j] = scale
		}
	}
}

func (op *attentionOp) backward(gs *opkit.Grads) {
	gs.Set(0, gs.Apply(newAttentionGrad(op), append(gs.Inputs(), gs.Grad())...))
}

// attentionGradOp computes dqkv from (qkv[, padMask], dO) and the
// probabilities its forward op saved.
type attentionGradOp struct {
	opkit.Base
	fwd     *attentionOp
	out     opkit.Buffer
	scratch opkit.Buffer // dP, then dS, of every (batch, head) pair
}

func newAttentionGrad(fwd *attentionOp) *attentionGradOp {
	return &attentionGradOp{fwd: fwd, Base: opkit.Base{
		Name: "attention.dqkv", Key: fmt.Sprintf("ops.attentiongrad(%p)", fwd),
		Dims:     append(slices.Clone(fwd.Dims[:fwd.Arity()]), 2, 2),
		Backward: opkit.NotImplemented("double backward through ScaledDotProductAttention"),
	}}
}

func (op *attentionGradOp) Do(vs ...G.Value) (G.Value, error) {
	roles := append(op.fwd.roles(), "gradient")
	in, err := opkit.Inputs(op, vs, roles...)
	if err != nil {
		return nil, err
	}
	qkv, pad, g := in[0], in[1], in[len(roles)-1]
	if err := op.fwd.check(qkv, pad); err != nil {
		return nil, err
	}
	if g.Dtype() != qkv.Dtype() || g.Dims() != 2 || g.Shape()[0] != qkv.Shape()[0] || g.Shape()[1] != op.fwd.d {
		return nil, fmt.Errorf("%v: gradient is %v%v, want %v(%d, %d)", op, g.Dtype(), g.Shape(), qkv.Dtype(), qkv.Shape()[0], op.fwd.d)
	}
	if !op.fwd.ran {
		return nil, fmt.Errorf("%v: the forward attention has not run", op)
	}
	dt := qkv.Dtype()
	out := op.out.Get(dt, qkv.Shape())
	probs := tensor.Shape{op.fwd.cfg.Batch * op.fwd.cfg.Heads, op.fwd.t, op.fwd.t}
	w := op.scratch.Get(dt, probs)
	p := op.fwd.p.Get(dt, probs)
	var pd, mask *tensor.Dense
	if op.fwd.dropped {
		pd, mask = op.fwd.pd.Get(dt, probs), op.fwd.mask.Get(dt, probs)
	}
	k32, k64 := op.fwd.kernels()
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		attentionBackward(k32, o, qkv.Float32s(), g.Float32s(), p.Float32s(), affineData[float32](pd), affineData[float32](mask), w.Float32s())
	case tensor.Float64:
		o := out.Float64s()
		attentionBackward(k64, o, qkv.Float64s(), g.Float64s(), p.Float64s(), affineData[float64](pd), affineData[float64](mask), w.Float64s())
	}
	return out, nil
}

func attentionBackward[T graph.Float](k *attentionKernel[T], dqkv, qkv, g, p, pd, mask, w []T) {
	k.backward = true
	k.dqkv, k.qkv, k.g, k.p, k.pd, k.mask, k.w = dqkv, qkv, g, p, pd, mask, w
	bh, _, _, _, _ := k.op.heads()
	parallel.For(bh, 1, k)
	k.dqkv, k.qkv, k.g, k.p, k.pd, k.mask, k.w = nil, nil, nil, nil, nil, nil, nil
}

var (
	_ G.ADOp = &attentionOp{}
	_ G.SDOp = &attentionOp{}
)
