package opkit

import (
	"hash/fnv"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Base's methods follow from its fields: the type is fresh each call (and
// built from Dims), the hash is FNV-1a of Key, DiffWRT defaults to every
// input.
func TestBaseMethods(t *testing.T) {
	b := &Base{Name: "twice", Key: "ops.twice(3)", Dims: []int{2, 1, 2}}
	if b.Arity() != 2 || b.String() != "twice" {
		t.Errorf("Arity, String = %d, %q, want 2, \"twice\"", b.Arity(), b.String())
	}
	if got := b.Type().String(); got != "Matrix a → Vector a → Matrix a" {
		t.Errorf("Type = %s", got)
	}
	if b.Type() == b.Type() {
		t.Error("Type returned the same value twice; gorgonia mutates types")
	}
	h := fnv.New32a()
	h.Write([]byte("ops.twice(3)"))
	if b.Hashcode() != h.Sum32() {
		t.Errorf("Hashcode = %#x, want FNV-1a of the key %#x", b.Hashcode(), h.Sum32())
	}
	if w := b.DiffWRT(2); len(w) != 2 || !w[0] || !w[1] {
		t.Errorf("DiffWRT(2) = %v, want [true true]", w)
	}
	b.WRT = []bool{true, false}
	if w := b.DiffWRT(2); w[1] {
		t.Errorf("DiffWRT with WRT set = %v", w)
	}
}

// An op without a backward rule, or with NotImplemented, reports it
// instead of panicking.
func TestBaseNoBackward(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("x"))
	for _, c := range []struct {
		rule func(*Grads)
		want string
	}{
		{nil, "sq: not differentiable"},
		{NotImplemented("double backward through Sq"), "sq: double backward through Sq is not implemented"},
	} {
		b := &Base{Name: "sq", Dims: []int{1, 1}, Backward: c.rule}
		if _, err := b.SymDiff(G.Nodes{x}, x, x); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SymDiff: %v, want %q", err, c.want)
		}
		// x has no gradient here, which DoDiff may report first.
		if err := b.DoDiff(G.ExecutionContext{}, G.Nodes{x}, x); err == nil {
			t.Error("DoDiff: no error")
		}
		if _, err := b.SymDiff(G.Nodes{x, x}, x, x); err == nil || !strings.Contains(err.Error(), "with 2 inputs, want 1") {
			t.Errorf("SymDiff with 2 inputs: %v", err)
		}
	}
}
