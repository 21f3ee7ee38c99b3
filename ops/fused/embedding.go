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
	"hash"
	"math"

	"github.com/chewxy/hm"
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
	return opkit.Apply(&embeddingOp{}, idx, table)
}

type embeddingOp struct {
	opkit.Defaults
	out opkit.Buffer
}

func (op *embeddingOp) Arity() int    { return 2 }
func (op *embeddingOp) Type() hm.Type { return opkit.FnType(2, 2, 2) }
func (op *embeddingOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	idx, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	table, err := opkit.ShapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{idx[0], idx[1] * table[1]}, nil
}

func (op *embeddingOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "indices", "table")
	if err != nil {
		return nil, err
	}
	idx, table := in[0], in[1]
	rows, k := idx.Shape()[0], idx.Shape()[1]
	vocab, d := table.Shape()[0], table.Shape()[1]
	out := op.out.Get(table.Dtype(), tensor.Shape{rows, k * d})
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

func (op *embeddingOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ops.embedding") }
func (op *embeddingOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *embeddingOp) String() string        { return "embedding" }
func (op *embeddingOp) DiffWRT(n int) []bool  { return []bool{false, true} }

func (op *embeddingOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := opkit.Apply(&embeddingGradOp{vocab: inputs[1].Shape()[0]}, inputs[0], grad)
	return G.Nodes{nil, d}, err
}

func (op *embeddingOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	return opkit.DiffInto(op, inputs[1], &embeddingGradOp{vocab: inputs[1].Shape()[0]}, inputs[0].Value(), gv)
}

// embeddingGradOp scatter-adds G (rows × k·d) into a (vocab × d) table.
type embeddingGradOp struct {
	opkit.Defaults
	vocab int
	out   opkit.Buffer
}

func (op *embeddingGradOp) Arity() int    { return 2 }
func (op *embeddingGradOp) Type() hm.Type { return opkit.FnType(2, 2, 2) }
func (op *embeddingGradOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	idx, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	g, err := opkit.ShapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	if idx[1] == 0 || g[1]%idx[1] != 0 {
		return nil, fmt.Errorf("%v: gradient shape %v does not split into %d embeddings", op, g, idx[1])
	}
	return tensor.Shape{op.vocab, g[1] / idx[1]}, nil
}

func (op *embeddingGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "indices", "gradient")
	if err != nil {
		return nil, err
	}
	idx, g := in[0], in[1]
	d := g.Shape()[1] / idx.Shape()[1]
	out := op.out.Get(g.Dtype(), tensor.Shape{op.vocab, d})
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

func (op *embeddingGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.embeddinggrad(%d)", op.vocab) }
func (op *embeddingGradOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *embeddingGradOp) String() string        { return "embedding.dtable" }
func (op *embeddingGradOp) DiffWRT(n int) []bool  { return []bool{false, true} }
func (op *embeddingGradOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := opkit.Apply(&embeddingOp{}, inputs[0], grad)
	return G.Nodes{nil, d}, err
}
func (op *embeddingGradOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	return opkit.DiffInto(op, inputs[1], &embeddingOp{}, inputs[0].Value(), gv)
}
