package ops

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
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Embedding returns the rows of table (vocab × d) selected by idx (rows × k),
// concatenated per row into a (rows × k·d) matrix. Indices must be integers
// in [0, vocab); others are a run-time error naming the position.
func Embedding(idx, table *G.Node) (*G.Node, error) {
	if err := checkMatrix("ops.Embedding", "indices", idx); err != nil {
		return nil, err
	}
	if err := checkMatrix("ops.Embedding", "table", table); err != nil {
		return nil, err
	}
	if idx.Dtype() != table.Dtype() {
		return nil, fmt.Errorf("ops.Embedding: indices are %v but the table is %v", idx.Dtype(), table.Dtype())
	}
	return apply(&embeddingOp{}, idx, table)
}

type embeddingOp struct {
	opDefaults
	out buffer
}

func (op *embeddingOp) Arity() int    { return 2 }
func (op *embeddingOp) Type() hm.Type { return fnType(2, 2, 2) }
func (op *embeddingOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	idx, err := shapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	table, err := shapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{idx[0], idx[1] * table[1]}, nil
}

func (op *embeddingOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 2 {
		return nil, fmt.Errorf("%v: got %d inputs, want 2", op, len(vs))
	}
	idx, err := dense(op, "indices", vs[0])
	if err != nil {
		return nil, err
	}
	table, err := dense(op, "table", vs[1])
	if err != nil {
		return nil, err
	}
	rows, k := idx.Shape()[0], idx.Shape()[1]
	vocab, d := table.Shape()[0], table.Shape()[1]
	out := op.out.get(table.Dtype(), tensor.Shape{rows, k * d})
	switch o := out.Data().(type) {
	case []float32:
		err = gather(o, idx.Float32s(), table.Float32s(), vocab, d)
	case []float64:
		err = gather(o, idx.Float64s(), table.Float64s(), vocab, d)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return out, nil
}

func index[T Float](v T, pos, vocab int) (int, error) {
	f := float64(v)
	if f != math.Trunc(f) || f < 0 || f >= float64(vocab) {
		return 0, fmt.Errorf("index %d is %v, want an integer in [0, %d)", pos, f, vocab)
	}
	return int(f), nil
}

func gather[T Float](out, idx, table []T, vocab, d int) error {
	for p, v := range idx {
		i, err := index(v, p, vocab)
		if err != nil {
			return err
		}
		copy(out[p*d:(p+1)*d], table[i*d:(i+1)*d])
	}
	return nil
}

func (op *embeddingOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ops.embedding") }
func (op *embeddingOp) Hashcode() uint32      { return hashOf(op) }
func (op *embeddingOp) String() string        { return "embedding" }
func (op *embeddingOp) DiffWRT(n int) []bool  { return []bool{false, true} }

func (op *embeddingOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := apply(&embeddingGradOp{vocab: inputs[1].Shape()[0]}, inputs[0], grad)
	return G.Nodes{nil, d}, err
}

func (op *embeddingOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := outGrad(op, output)
	if err != nil {
		return err
	}
	d, err := (&embeddingGradOp{vocab: inputs[1].Shape()[0]}).Do(inputs[0].Value(), gv)
	if err != nil {
		return err
	}
	return accumulateGrad(op, inputs[1], d)
}

// embeddingGradOp scatter-adds G (rows × k·d) into a (vocab × d) table.
type embeddingGradOp struct {
	opDefaults
	vocab int
	out   buffer
}

func (op *embeddingGradOp) Arity() int    { return 2 }
func (op *embeddingGradOp) Type() hm.Type { return fnType(2, 2, 2) }
func (op *embeddingGradOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	idx, err := shapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	g, err := shapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	if idx[1] == 0 || g[1]%idx[1] != 0 {
		return nil, fmt.Errorf("%v: gradient shape %v does not split into %d embeddings", op, g, idx[1])
	}
	return tensor.Shape{op.vocab, g[1] / idx[1]}, nil
}

func (op *embeddingGradOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 2 {
		return nil, fmt.Errorf("%v: got %d inputs, want 2", op, len(vs))
	}
	idx, err := dense(op, "indices", vs[0])
	if err != nil {
		return nil, err
	}
	g, err := dense(op, "gradient", vs[1])
	if err != nil {
		return nil, err
	}
	d := g.Shape()[1] / idx.Shape()[1]
	out := op.out.get(g.Dtype(), tensor.Shape{op.vocab, d})
	switch o := out.Data().(type) {
	case []float32:
		err = scatterAdd(o, idx.Float32s(), g.Float32s(), op.vocab, d)
	case []float64:
		err = scatterAdd(o, idx.Float64s(), g.Float64s(), op.vocab, d)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return out, nil
}

func scatterAdd[T Float](out, idx, g []T, vocab, d int) error {
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

func (op *embeddingGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.embeddinggrad(%d)", op.vocab) }
func (op *embeddingGradOp) Hashcode() uint32      { return hashOf(op) }
func (op *embeddingGradOp) String() string        { return "embedding.dtable" }
func (op *embeddingGradOp) DiffWRT(n int) []bool  { return []bool{false, true} }
func (op *embeddingGradOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := apply(&embeddingOp{}, inputs[0], grad)
	return G.Nodes{nil, d}, err
}
func (op *embeddingGradOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := outGrad(op, output)
	if err != nil {
		return err
	}
	d, err := (&embeddingOp{}).Do(inputs[0].Value(), gv)
	if err != nil {
		return err
	}
	return accumulateGrad(op, inputs[1], d)
}
