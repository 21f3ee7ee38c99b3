package experiment

import (
	"strings"
	"testing"

	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train/report"
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

func TestCheckNames(t *testing.T) {
	valid := func(s string) bool { return s == "x" || s == "y" }
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"x", "y"}, ""},
		{[]string{"x", "z"}, `-l "z": want a comma-separated list of distinct names from x, y`},
		{[]string{"y", "y"}, `-l "y": want a comma-separated list of distinct names from x, y`},
		{nil, "-l is empty: want at least one of x, y"},
	} {
		err := CheckNames("l", tc.names, valid, "x, y")
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("CheckNames(%q): %v, want %q", tc.names, err, tc.want)
		}
	}
}

// "every setting in A is lower than every one in B" holds only when every
// pair does, fails when one pair goes the other way, and is not judged
// when a setting did not run.
func TestAllLower(t *testing.T) {
	vals := map[string][]float64{
		"lo": {1, 1, 1, 1, 1, 1}, "mid": {2, 2, 2, 2, 2, 2}, "hi": {3, 3, 3, 3, 3, 3}, "mixed": {0, 4, 0, 4, 0, 4},
	}
	get := func(n string) []float64 { return vals[n] }
	for _, tc := range []struct {
		a, b  []string
		want  report.Verdict
		ok    bool
		pairs int
	}{
		{[]string{"lo", "mid"}, []string{"hi"}, report.Confirmed, true, 2},
		{[]string{"lo"}, []string{"mid", "mixed"}, report.Unclear, true, 2},
		{[]string{"lo", "hi"}, []string{"mid"}, report.NotConfirmed, true, 2},
		{[]string{"lo"}, []string{"hi", "absent", "mid"}, report.Unclear, false, 1},
	} {
		pairs, v, ok := AllLower(tc.a, tc.b, get, 0.05)
		if v != tc.want || ok != tc.ok || len(pairs) != tc.pairs {
			t.Errorf("%v < %v: %q, %v, %d pairs; want %q, %v, %d", tc.a, tc.b, v, ok, len(pairs), tc.want, tc.ok, tc.pairs)
		}
	}
}

func TestNewGridSeeds(t *testing.T) {
	g := NewGrid(Flags{Out: "o", Seed: 7, Seeds: 3, Workers: 2}, []string{"a"}, func(s string) string { return s }, "loss")
	if len(g.Seeds) != 3 || g.Seeds[0] != 7 || g.Seeds[2] != 9 || g.Dir != "o" || g.Workers != 2 || g.Metrics[0] != "loss" {
		t.Errorf("NewGrid: %+v", g)
	}
}
