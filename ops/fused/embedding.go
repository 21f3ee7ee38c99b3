package fused

// Embedding lookup: rows of a table selected by integer indices (stored as
// floats, since the graph has one float dtype), concatenated per example.
//
//	forward   y[i] = table[idx[i,0]] ‖ table[idx[i,1]] ‖ … (rows × k·d)
//	backward  dtable[v] = Σ over (i, j) with idx[i,j] = v of G[i, j·d:(j+1)·d]
//
// The backward is linear in G and is itself an embedding lookup of the
// upstream gradient, so double backward works. Indices get no gradient.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Embedding returns the rows of table (vocab × d) selected by idx (rows × k),
// concatenated per row into a (rows × k·d) matrix. Indices must be integers
// in [0, vocab); others are a run-time error naming the position.
func Embedding(idx, table *G.Node) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.Embedding", "indices", idx); err != nil {
		return nil, err
	}
	if err := opkit.CheckMatrix("fused.Embedding", "table", table); err != nil {
		return nil, err
	}
	if idx.Dtype() != table.Dtype() {
		return nil, fmt.Errorf("fused.Embedding: indices are %v but the table is %v", idx.Dtype(), table.Dtype())
	}
	return opkit.Apply(newEmbedding(false, 0), idx, table)
}

// embeddingOp is the lookup or, with grad set, its adjoint: the
// scatter-add of G (rows × k·d) into a (vocab × d) table. Each is the
// other's backward; indices get no gradient.
type embeddingOp struct {
	opkit.Base
	grad  bool
	vocab int // of the adjoint's result
	out   opkit.Buffer
}

func newEmbedding(grad bool, vocab int) *embeddingOp {
	op := &embeddingOp{grad: grad, vocab: vocab}
	op.Base = opkit.Base{Name: "embedding", Key: "ops.embedding", Dims: []int{2, 2, 2}, WRT: []bool{false, true}, Backward: op.backward}
	if grad {
		op.Name, op.Key = "embedding.dtable", fmt.Sprintf("ops.embeddinggrad(%d)", vocab)
	}
	return op
}

func (op *embeddingOp) backward(gs *opkit.Grads) {
	adjoint := newEmbedding(!op.grad, gs.Node(1).Shape()[0])
	gs.Set(1, gs.Apply(adjoint, gs.Input(0), gs.Grad()))
}

func (op *embeddingOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	idx, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	x, err := opkit.ShapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	if !op.grad {
		return tensor.Shape{idx[0], idx[1] * x[1]}, nil
	}
	if idx[1] == 0 || x[1]%idx[1] != 0 {
		return nil, fmt.Errorf("%v: gradient shape %v does not split into %d embeddings", op, x, idx[1])
	}
	return tensor.Shape{op.vocab, x[1] / idx[1]}, nil
}

func (op *embeddingOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *embeddingOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	role := "table"
	if op.grad {
		role = "gradient"
	}
	in, err := opkit.Inputs(op, vs, "indices", role)
	if err != nil {
		return nil, err
	}
	idx, x := in[0], in[1]
	rows, k := idx.Shape()[0], idx.Shape()[1]
	vocab, d := x.Shape()[0], x.Shape()[1]
	shape := tensor.Shape{rows, k * d}
	if op.grad {
		vocab, d = op.vocab, d/k
		shape = tensor.Shape{vocab, d}
	}
	out, err := op.out.Use(op, prealloc, x.Dtype(), shape)
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		err = embed(op.grad, o, idx.Float32s(), x.Float32s(), vocab, d)
	case tensor.Float64:
		o := out.Float64s()
		err = embed(op.grad, o, idx.Float64s(), x.Float64s(), vocab, d)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return out, nil
}

func index[T graph.Float](v T, pos, vocab int) (int, error) {
	f := float64(v)
	if f != math.Trunc(f) || f < 0 || f >= float64(vocab) {
		return 0, fmt.Errorf("index %d is %v, want an integer in [0, %d)", pos, f, vocab)
	}
	return int(f), nil
}

func gather[T graph.Float](out, idx, table []T, vocab, d int) error {
	for p, v := range idx {
		i, err := index(v, p, vocab)
		if err != nil {
			return err
		}
		copy(out[p*d:(p+1)*d], table[i*d:(i+1)*d])
	}
	return nil
}

// embed runs the lookup (gather) or its adjoint (scatterAdd).
func embed[T graph.Float](adjoint bool, out, idx, x []T, vocab, d int) error {
	if adjoint {
		return scatterAdd(out, idx, x, vocab, d)
	}
	return gather(out, idx, x, vocab, d)
}

func scatterAdd[T graph.Float](out, idx, g []T, vocab, d int) error {
	clear(out)
	for p, v := range idx {
		i, err := index(v, p, vocab)
		if err != nil {
			return err
		}
		row, src := out[i*d:(i+1)*d], g[p*d:(p+1)*d]
		for j, x := range src {
			row[j] += x
		}
	}
	return nil
}
