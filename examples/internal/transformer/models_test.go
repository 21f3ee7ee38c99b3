package transformer

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
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

// ParseMLP finds the variants by name, and any other name as the ungated
// MLP of the activation activation.ParseActivation finds: a built-in one,
// one with a parameter, and one registered by the program.
func TestParseMLP(t *testing.T) {
	for name, want := range MLPs {
		if m, err := ParseMLP(name); err != nil || m != want {
			t.Errorf("ParseMLP(%q) = %v, %v; want %v", name, m, err, want)
		}
	}
	softsign, err := activation.New(activation.Def{Name: "softsign", Title: "Softsign",
		F:           func(x float64) float64 { return x / (1 + math.Abs(x)) },
		D1:          func(x float64) float64 { return 1 / ((1 + math.Abs(x)) * (1 + math.Abs(x))) },
		D2:          func(x float64) float64 { a := 1 + math.Abs(x); return -2 * math.Copysign(1, x) / (a * a * a) },
		Breakpoints: []float64{0}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMLP("softsign"); err == nil {
		t.Errorf("softsign before activation.Register: no error")
	}
	if err := activation.Register(softsign); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]activation.Activation{"elu": activation.ELU, "sigmoid_gated:1.702": activation.SigmoidGated(1.702), "softsign": softsign} {
		m, err := ParseMLP(name)
		if err != nil || m.Act != want || m.Gated() {
			t.Errorf("ParseMLP(%q) = %v, %v; want the ungated %v", name, m, err, want)
		}
	}
	_, err = ParseMLP("swish_glu")
	if err == nil || !strings.Contains(err.Error(), `MLP "swish_glu": not one of the variants geglu, gelu`) || !strings.Contains(err.Error(), "softsign") {
		t.Errorf("ParseMLP(swish_glu): %v, want an error naming the variants and the activations", err)
	}
}
