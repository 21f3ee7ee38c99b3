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
// Three nodes: the probabilities P (B·H·T² numbers), the dropout mask M
// when there is dropout (one byte a probability, mask.go), and the output,
// computed from qkv, P and M. The backward op takes qkv, P and M as
// inputs, so what it reads is what this Run's forward pass computed, and
// the Machine frees P and M once it has run (PyTorch's math attention
// saves the same). P̃ is recomputed from P and M, and dP, dS are worked out
// a (batch, head) pair at a time in a T² scratch per core. Products go
// through gemm.Gemm with leading dimensions that step over the other heads;
// the (batch, head) pairs are spread over cores by parallel. Double
// backward is not implemented: the backward op reports an error if it is
// differentiated.

import (
	"fmt"
	"math"
	"sync"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
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
	geo := attentionGeometry{batch: cfg.Batch, heads: cfg.Heads, t: rows / cfg.Batch, d: cols / 3, causal: cfg.Causal}
	probsIn := []*G.Node{qkv}
	if padMask != nil {
		if err := opkit.CheckMatrix(name, "padding mask", padMask); err != nil {
			return nil, err
		}
		if padMask.Shape()[0] != cfg.Batch || padMask.Shape()[1] != geo.t {
			return nil, fmt.Errorf("%s %q: padding mask %q has shape %v, want (%d, %d) (batch, T)", name, cfg.Name, padMask.Name(), padMask.Shape(), cfg.Batch, geo.t)
		}
		if padMask.Dtype() != qkv.Dtype() {
			return nil, fmt.Errorf("%s %q: padding mask is %v but qkv is %v", name, cfg.Name, padMask.Dtype(), qkv.Dtype())
		}
		probsIn = append(probsIn, padMask)
	}
	probs, err := opkit.Apply(newAttentionProbs(geo, padMask != nil), probsIn...)
	if err != nil {
		return nil, err
	}
	outIn := []*G.Node{qkv, probs}
	if cfg.Dropout > 0 {
		mask, err := opkit.Apply(newMask("attention-dropout", cfg.Dropout, cfg.Seed, cfg.Name, cfg.Mode, 2, geo.probsShape()), qkv)
		if err != nil {
			return nil, err
		}
		outIn = append(outIn, mask)
	}
	return opkit.Apply(newAttentionOut(geo, cfg.Dropout, false), outIn...)
}

// attentionGeometry is the shape of one attention: B sequences of T
// tokens, H heads over a width d.
type attentionGeometry struct {
	batch, heads, t, d int
	causal             bool
}

func (g attentionGeometry) String() string {
	return fmt.Sprintf("%d,%d,%d,%d,%t", g.batch, g.heads, g.t, g.d, g.causal)
}

// pairs returns the geometry shared by the loops over (batch, head) pairs.
func (g attentionGeometry) pairs() (bh, t, d, dh int, scale float64) {
	dh = g.d / g.heads
	return g.batch * g.heads, g.t, g.d, dh, 1 / math.Sqrt(float64(dh))
}

func (g attentionGeometry) probsShape() tensor.Shape {
	return tensor.Shape{g.batch * g.heads, g.t, g.t}
}

// checkQKV validates qkv at run time against the geometry.
func (g attentionGeometry) checkQKV(op fmt.Stringer, qkv *tensor.Dense) error {
	if qkv.Dims() != 2 || qkv.Shape()[0] != g.batch*g.t || qkv.Shape()[1] != 3*g.d {
		return fmt.Errorf("%v: qkv has shape %v, want (%d, %d)", op, qkv.Shape(), g.batch*g.t, 3*g.d)
	}
	return nil
}

// checkProbs validates the probabilities at run time.
func (g attentionGeometry) checkProbs(op fmt.Stringer, qkv, p *tensor.Dense) error {
	if p.Dtype() != qkv.Dtype() || p.Shape().TotalSize() != g.batch*g.heads*g.t*g.t {
		return fmt.Errorf("%v: probabilities are %v%v, want %v%v", op, p.Dtype(), p.Shape(), qkv.Dtype(), g.probsShape())
	}
	return nil
}

// attentionProbsOp computes P = softmax(QKᵀ/√d_h + mask) for every
// (batch, head) pair from qkv[ and the padding mask].
type attentionProbsOp struct {
	opkit.Base
	geo    attentionGeometry
	padded bool
	out    opkit.Buffer
	k32    attentionKernel[float32]
	k64    attentionKernel[float64]
}

func newAttentionProbs(geo attentionGeometry, padded bool) *attentionProbsOp {
	op := &attentionProbsOp{geo: geo, padded: padded}
	name := fmt.Sprintf("attention.probs(heads=%d", geo.heads)
	if geo.causal {
		name += ", causal"
	}
	op.Base = opkit.Base{
		Name: name + ")", Key: fmt.Sprintf("ops.attentionprobs(%v,%t)", geo, padded),
		Dims: []int{2, 3}, WRT: []bool{false},
	}
	if padded {
		op.Dims, op.WRT = []int{2, 2, 3}, []bool{false, false}
	}
	return op
}

func (op *attentionProbsOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return op.geo.probsShape(), nil
}

func (op *attentionProbsOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the probabilities into prealloc, a Machine's tensor,
// or without one into the op's own buffer.
func (op *attentionProbsOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"qkv", "padding mask"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	qkv, pad := in[0], in[1]
	if err := op.geo.checkQKV(op, qkv); err != nil {
		return nil, err
	}
	b, t := op.geo.batch, op.geo.t
	if op.padded && (pad.Dims() != 2 || pad.Shape()[0] != b || pad.Shape()[1] != t || pad.Dtype() != qkv.Dtype()) {
		return nil, fmt.Errorf("%v: padding mask is %v%v, want %v(%d, %d)", op, pad.Dtype(), pad.Shape(), qkv.Dtype(), b, t)
	}
	var shape [3]int
	shape[0], shape[1], shape[2] = op.geo.batch*op.geo.heads, t, t
	out, err := op.out.Use(op, prealloc, qkv.Dtype(), shape[:])
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		err = op.k32.run(attentionProbsPass, op.geo, attentionData[float32]{p: o, qkv: qkv.Float32s(), pad: affineData[float32](pad)})
	case tensor.Float64:
		o := out.Float64s()
		err = op.k64.run(attentionProbsPass, op.geo, attentionData[float64]{p: o, qkv: qkv.Float64s(), pad: affineData[float64](pad)})
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return out, nil
}

// attentionOutOp computes O = P̃·V from (qkv, P[, M]), P̃ = P ⊙ M·1/(1−p)
// with dropout, or with grad set the backward op dqkv from
// (qkv, P[, M], dO).
type attentionOutOp struct {
	opkit.Base
	geo     attentionGeometry
	p       float64 // dropout probability; 0: no mask input
	grad    bool
	roles   []string // of the inputs, for opkit.Inputs
	out     opkit.Buffer
	k32     attentionKernel[float32]
	k64     attentionKernel[float64]
	masked  bool
	scale32 float32
	scale64 float64
}

func newAttentionOut(geo attentionGeometry, p float64, grad bool) *attentionOutOp {
	op := &attentionOutOp{geo: geo, p: p, grad: grad, masked: p > 0}
	name := fmt.Sprintf("attention(heads=%d", geo.heads)
	if geo.causal {
		name += ", causal"
	}
	if p > 0 {
		name += fmt.Sprintf(", dropout=%g", p)
		op.scale64 = 1 / (1 - p)
		op.scale32 = float32(op.scale64)
	}
	op.Base = opkit.Base{
		Name: name + ")", Key: fmt.Sprintf("ops.attention(%v,%x,%t)", geo, math.Float64bits(p), grad),
		Dims: []int{2, 3}, WRT: []bool{true, false}, Backward: op.backward,
	}
	if op.masked {
		op.Dims, op.WRT = []int{2, 3, 3}, []bool{true, false, false}
	}
	op.roles = []string{"qkv", "probabilities", ""}[:len(op.Dims)]
	if grad {
		// Every input may carry a second derivative: differentiating
		// this op reports that it is not implemented.
		op.Name, op.Dims, op.WRT = "attention.dqkv", append(op.Dims, 2), nil
		op.roles = append(op.roles, "gradient")
		op.Backward = opkit.NotImplemented("double backward through ScaledDotProductAttention")
	}
	op.Dims = append(op.Dims, 2)
	return op
}

// Type: qkv, P of qkv's type, M (uint8)[, dO] → O or dqkv.
func (op *attentionOutOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := []hm.Type{G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 3, Of: a}}
	if op.masked {
		ts = append(ts, G.TensorType{Dims: 3, Of: tensor.Uint8})
	}
	if op.grad {
		ts = append(ts, G.TensorType{Dims: 2, Of: a})
	}
	return hm.NewFnType(append(ts, G.TensorType{Dims: 2, Of: a})...)
}

func (op *attentionOutOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	if op.grad {
		return tensor.Shape{op.geo.batch * op.geo.t, 3 * op.geo.d}, nil
	}
	return tensor.Shape{op.geo.batch * op.geo.t, op.geo.d}, nil
}

func (op *attentionOutOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *attentionOutOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, op.roles...)
	if err != nil {
		return nil, err
	}
	qkv, p := in[0], in[1]
	if err := op.geo.checkQKV(op, qkv); err != nil {
		return nil, err
	}
	if err := op.geo.checkProbs(op, qkv, p); err != nil {
		return nil, err
	}
	var mask []uint8
	if op.masked {
		if mask, err = checkMask(op, vs[2], p.Shape().TotalSize()); err != nil {
			return nil, err
		}
		if passes(mask) {
			mask = nil
		}
	}
	rows := qkv.Shape()[0]
	var shape [2]int
	shape[0], shape[1] = rows, op.geo.d
	var g *tensor.Dense
	pass := attentionOutPass
	if op.grad {
		g = in[len(op.roles)-1]
		if g.Dtype() != qkv.Dtype() || g.Dims() != 2 || g.Shape()[0] != rows || g.Shape()[1] != op.geo.d {
			return nil, fmt.Errorf("%v: gradient is %v%v, want %v(%d, %d)", op, g.Dtype(), g.Shape(), qkv.Dtype(), rows, op.geo.d)
		}
		shape[1], pass = 3*op.geo.d, attentionBackwardPass
	}
	out, err := op.out.Use(op, prealloc, qkv.Dtype(), shape[:])
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		err = op.k32.run(pass, op.geo, attentionData[float32]{out: o, qkv: qkv.Float32s(), p: p.Float32s(), mask: mask, scale: op.scale32, g: affineData[float32](g)})
	case tensor.Float64:
		o := out.Float64s()
		err = op.k64.run(pass, op.geo, attentionData[float64]{out: o, qkv: qkv.Float64s(), p: p.Float64s(), mask: mask, scale: op.scale64, g: affineData[float64](g)})
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return out, nil
}

func (op *attentionOutOp) backward(gs *opkit.Grads) {
	gs.Set(0, gs.Apply(newAttentionOut(op.geo, op.p, true), append(gs.Inputs(), gs.Grad())...))
}

// attentionPass is what an attentionKernel computes for each pair.
type attentionPass int

const (
	attentionProbsPass    attentionPass = iota // P from qkv[, pad]
	attentionOutPass                           // O from qkv, P[, M]
	attentionBackwardPass                      // dqkv from qkv, P[, M], dO
)

// attentionData holds the tensors of one pass: out is O or dqkv, g is dO;
// mask is nil without dropout (or when it passes everything), and scale is
// 1/(1−p) in T, the factor of the kept probabilities.
type attentionData[T graph.Float] struct {
	out, qkv, pad, p, g []T
	mask                []uint8
	scale               T
}

// attentionKernel runs a pass over a range of (batch, head) pairs;
// parallel.For splits the pairs over cores. The ops keep one per dtype,
// so a training step allocates nothing here.
type attentionKernel[T graph.Float] struct {
	pass attentionPass
	geo  attentionGeometry
	attentionData[T]
	mu     sync.Mutex
	failed error // the first matrix product refused
}

// run computes pass over every pair. The products' arguments come from
// the op's own checked shapes, so a refused one is a bug in this file: it
// is returned, not skipped.
func (k *attentionKernel[T]) run(pass attentionPass, geo attentionGeometry, data attentionData[T]) error {
	k.pass, k.geo, k.attentionData = pass, geo, data
	bh, _, _, _, _ := geo.pairs()
	parallel.For(bh, 1, k)
	k.attentionData = attentionData[T]{} // keep no tensor alive
	err := k.failed
	k.failed = nil
	if err != nil {
		return fmt.Errorf("attention: %w", err)
	}
	return nil
}

// mm is gemm.Gemm on a worker: a refusal is recorded for run to return.
func (k *attentionKernel[T]) mm(tA, tB bool, m, n, kk int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if err := gemm.Gemm(tA, tB, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc); err != nil {
		k.mu.Lock()
		if k.failed == nil {
			k.failed = err
		}
		k.mu.Unlock()
	}
}

// scratch holds T² numbers per worker for P̃ and for dP then dS: the
// backward pass works out one pair at a time.
var (
	scratch32 parallel.FreeList[[]float32]
	scratch64 parallel.FreeList[[]float64]
)

func getScratch[T graph.Float](n int) *[]T {
	var s *[]T
	switch l := any(&s).(type) {
	case **[]float32:
		*l = scratch32.Get()
	case **[]float64:
		*l = scratch64.Get()
	}
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return s
}

func putScratch[T graph.Float](s *[]T) {
	switch x := any(s).(type) {
	case *[]float32:
		scratch32.Put(x)
	case *[]float64:
		scratch64.Put(x)
	}
}

func (k *attentionKernel[T]) Run(lo, hi int) {
	if k.pass == attentionProbsPass {
		for i := lo; i < hi; i++ {
			k.probsPair(i)
		}
		return
	}
	_, t, _, _, _ := k.geo.pairs()
	s := getScratch[T](2 * t * t)
	for i := lo; i < hi; i++ {
		if k.pass == attentionOutPass {
			k.outPair(i, (*s)[:t*t])
		} else {
			k.backwardPair(i, (*s)[:t*t], (*s)[t*t:])
		}
	}
	putScratch(s)
}

func (k *attentionKernel[T]) probsPair(i int) {
	geo := k.geo
	_, t, d, dh, scale := geo.pairs()
	b, h := i/geo.heads, i%geo.heads
	q := k.qkv[b*t*3*d+h*dh:]
	key := q[d:]
	s := k.p[i*t*t : (i+1)*t*t]
	k.mm(false, true, t, t, dh, T(scale), q, 3*d, key, 3*d, 0, s, t)
	inf := T(math.Inf(-1))
	for r := 0; r < t; r++ {
		row := s[r*t : (r+1)*t]
		if geo.causal { // keys after r get probability 0 without an exp
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
}

// dropped returns the probabilities of pair i as the output uses them:
// P, or P̃ = P ⊙ M written into pd.
func (k *attentionKernel[T]) dropped(i int, pd []T) []T {
	t := k.geo.t
	p := k.p[i*t*t : (i+1)*t*t]
	if k.mask == nil {
		return p
	}
	m := k.mask[i*t*t : (i+1)*t*t]
	mult := [...]T{maskDrop: 0, maskKeep: k.scale}
	for j, x := range p {
		pd[j] = x * mult[m[j]]
	}
	return pd
}

func (k *attentionKernel[T]) outPair(i int, pd []T) {
	geo := k.geo
	_, t, d, dh, _ := geo.pairs()
	b, h := i/geo.heads, i%geo.heads
	v := k.qkv[b*t*3*d+h*dh+2*d:]
	k.mm(false, false, t, dh, t, 1, k.dropped(i, pd), t, v, 3*d, 0, k.out[b*t*d+h*dh:], d)
}

func (k *attentionKernel[T]) backwardPair(i int, pd, w []T) {
	geo := k.geo
	_, t, d, dh, scale := geo.pairs()
	b, h := i/geo.heads, i%geo.heads
	off := b*t*3*d + h*dh
	q, key, v := k.qkv[off:], k.qkv[off+d:], k.qkv[off+2*d:]
	dq, dk, dv := k.out[off:], k.out[off+d:], k.out[off+2*d:]
	do := k.g[b*t*d+h*dh:]
	p := k.p[i*t*t : (i+1)*t*t]
	k.mm(true, false, t, dh, t, 1, k.dropped(i, pd), t, do, d, 0, dv, 3*d)
	k.mm(false, true, t, t, dh, 1, do, d, v, 3*d, 0, w, t)
	if k.mask != nil {
		m := k.mask[i*t*t : (i+1)*t*t]
		mult := [...]T{maskDrop: 0, maskKeep: k.scale}
		for j := range w {
			w[j] *= mult[m[j]]
		}
	}
	for r := 0; r < t; r++ {
		wr := w[r*t : (r+1)*t]
		softmaxGradRow(wr, p[r*t:(r+1)*t], wr)
	}
	k.mm(false, false, t, dh, t, T(scale), w, t, key, 3*d, 0, dq, 3*d)
	k.mm(true, false, t, dh, t, T(scale), w, t, q, 3*d, 0, dk, 3*d)
}

var (
	_ G.ADOp = &attentionOutOp{}
	_ G.SDOp = &attentionOutOp{}
)
