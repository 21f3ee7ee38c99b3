package graph

// Mixed precision, PyTorch's torch.autocast("cpu", dtype=torch.bfloat16)
// for a whole graph: the matrix products (package fused's Linear, MatMul,
// BatchedMatMul and ScaledDotProductAttention, forward and backward) round
// their operands to bfloat16 and accumulate in float32, while parameters,
// gradients, optimizer state and every other op stay float32. The setting
// lives in a cell per gorgonia graph that each product finds when it is
// built and reads at every run, so it can be switched at any time, as
// SetTraining can.

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Precision is the arithmetic of a graph's matrix products.
type Precision uint32

const (
	// Full computes products in the graph's dtype.
	Full Precision = iota
	// BFloat16 rounds both operands of every product to bfloat16 (to
	// nearest, ties to even) and sums the products in float32, as
	// PyTorch's CPU autocast to bfloat16 does (see ops/gemm.GemmBF16). The
	// results stay float32: PyTorch's autocast rounds them to bfloat16 as
	// well, which this does not.
	BFloat16
)

func (p Precision) String() string {
	switch p {
	case Full:
		return "full"
	case BFloat16:
		return "bfloat16"
	}
	return fmt.Sprintf("Precision(%d)", uint32(p))
}

// ParsePrecision reads a precision by name: "full" (or "float32", "")
// and "bfloat16" (or "bf16"), as flags take it.
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "full", "float32", "fp32", "f32":
		return Full, nil
	case "bfloat16", "bf16":
		return BFloat16, nil
	}
	return Full, fmt.Errorf("graph: precision %q, want full or bfloat16", s)
}

// Autocast is a graph's precision setting, read by the matrix products
// built on it at every run. The nil *Autocast is Full.
type Autocast struct{ p atomic.Uint32 }

// Precision returns the setting (Full for nil).
func (a *Autocast) Precision() Precision {
	if a == nil {
		return Full
	}
	return Precision(a.p.Load())
}

// SetAutocast sets the precision of the graph's matrix products from the
// next Run on: BFloat16 needs a float32 graph. The optimizer, the
// gradients it reads and the parameters it writes stay float32 (master
// weights); LayerNorm, softmax, GELU and the losses stay float32 too.
func (g *Graph) SetAutocast(p Precision) error {
	if p != Full && p != BFloat16 {
		return fmt.Errorf("graph.SetAutocast: %v, want Full or BFloat16", p)
	}
	if p == BFloat16 && g.dtype != tensor.Float32 {
		return fmt.Errorf("graph.SetAutocast: bfloat16 products on a %v graph; autocast needs a float32 graph (as PyTorch's casts only float32)", g.dtype)
	}
	autocastOf(g.eg).p.Store(uint32(p))
	return nil
}

// Autocast returns the precision of the graph's matrix products.
func (g *Graph) Autocast() Precision { return autocastOf(g.eg).Precision() }

// AutocastOf returns the precision setting of the graph n belongs to, for
// an op built on n to read at every run; nil (Full) for a nil node.
func AutocastOf(n *G.Node) *Autocast {
	if n == nil || n.Graph() == nil {
		return nil
	}
	return autocastOf(n.Graph())
}

// autocasts maps each gorgonia graph to its setting, weakly: an entry is
// dropped when its graph is collected (the ops keep their cell).
var autocasts struct {
	sync.Mutex
	m map[weak.Pointer[G.ExprGraph]]*Autocast
}

func autocastOf(eg *G.ExprGraph) *Autocast {
	key := weak.Make(eg)
	autocasts.Lock()
	defer autocasts.Unlock()
	if a, ok := autocasts.m[key]; ok {
		return a
	}
	if autocasts.m == nil {
		autocasts.m = map[weak.Pointer[G.ExprGraph]]*Autocast{}
	}
	a := new(Autocast)
	autocasts.m[key] = a
	runtime.AddCleanup(eg, func(key weak.Pointer[G.ExprGraph]) {
		autocasts.Lock()
		delete(autocasts.m, key)
		autocasts.Unlock()
	}, key)
	return a
}
