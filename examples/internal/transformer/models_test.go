package transformer

import (
	"strings"
	"testing"

	"github.com/geluproject/gelu/nn"
)

// A gated MLP gets 2/3 of the ungated width, so that its three matrices
// hold as many weights as the ungated two (Shazeer 2020): d·h·2 = d·h'·3.
func TestMLPWidthsAndForms(t *testing.T) {
	for name, m := range MLPs {
		hidden, act, gate := m.Block(96)
		want, form := 96, "act(x·W1)·W2"
		if m.Gated() {
			want, form = 64, "(act(x·W1) ⊙ x·V)·W2"
			if act != (MLP{}).Act || gate != m.Gate {
				t.Errorf("%s: Block gives activation %v and gate %v, want the zero activation and the gate %v", name, act, gate, m.Gate)
			}
		} else if act != m.Act || !gate.IsZero() {
			t.Errorf("%s: Block gives activation %v and gate %v, want %v and none", name, act, gate, m.Act)
		}
		if hidden != want || m.Hidden(96) != want || m.Form() != form {
			t.Errorf("%s: inner width %d (Hidden %d), form %q; want %d, %q", name, hidden, m.Hidden(96), m.Form(), want, form)
		}
	}
	if got := MLPNames(); got != "geglu, gelu, gelu_tanh, reglu, relu, silu, swiglu" {
		t.Errorf("MLPNames() = %q", got)
	}
}

// GPTModel's graph has the parameters of nanoGPT's model counted by hand
// (tied embeddings, per block two LayerNorms, attention and the MLP, the
// final LayerNorm), and its output is the last position's logits.
func TestGPTModelShapesAndParams(t *testing.T) {
	const v, T, d, h, rows = 11, 5, 8, 32, 3
	m, gpt, err := GPTModel(nn.GPTConfig{BlockSize: T, VocabSize: v, Layers: 2, Heads: 2, Dim: d, Hidden: h}, rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := v*d + T*d + 2*(4*d+d*3*d+3*d+d*d+d+d*h+h+h*d+d) + 2*d
	if n := m.Graph.NumParams(); n != want || gpt == nil {
		t.Errorf("%d parameters, want %d", n, want)
	}
	if s := m.Output.Shape(); len(s) != 2 || s[0] != rows || s[1] != v {
		t.Errorf("output shape %v, want (%d, %d)", s, rows, v)
	}
	if _, _, err := GPTModel(nn.GPTConfig{BlockSize: T, VocabSize: v, Layers: 1, Heads: 3, Dim: d}, rows, 1); err == nil || !strings.Contains(err.Error(), "heads") {
		t.Errorf("3 heads for width 8: error %v, want one about the heads", err)
	}
}
