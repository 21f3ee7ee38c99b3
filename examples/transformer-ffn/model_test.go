package main

import (
	"strings"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
)

// Params, counted from the shapes by hand, agrees with the parameters the
// graph holds; a shape with a zero size is refused with an error naming it.
func TestCharFFN(t *testing.T) {
	for _, s := range []CharFFN{{Vocab: 7, Context: 3, Embed: 2, Dim: 4, Hidden: 5, Layers: 0}, {Vocab: 11, Context: 2, Embed: 3, Dim: 6, Hidden: 8, Layers: 2}} {
		m, err := CharFFNModel(s, activation.GELU, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		if n := m.Graph.NumParams(); n != s.Params() {
			t.Errorf("%v: graph has %d parameters, Params says %d", s, n, s.Params())
		}
	}
	// Layers 0 by hand: embedding 7·2, projection 3·2·4+4, final LayerNorm
	// 2·4, head 4·7+7.
	if got, want := (CharFFN{Vocab: 7, Context: 3, Embed: 2, Dim: 4, Hidden: 5}).Params(), 7*2+3*2*4+4+2*4+4*7+7; got != want {
		t.Errorf("Params = %d, want %d", got, want)
	}
	if _, err := CharFFNModel(CharFFN{Vocab: 7, Context: 3, Embed: 0, Dim: 4, Hidden: 5}, activation.ReLU, 4, 1); err == nil || !strings.Contains(err.Error(), "embed 0") {
		t.Errorf("embed 0: error %v, want one naming the shape", err)
	}
}
