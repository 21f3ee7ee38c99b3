package probe

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// TestNewMLPNet builds a 4 → 3 → 2 → 5 MLP and checks that the Net keeps
// both hidden pre-activations and the Units have the MLP's activation and
// the widths 3 and 2.
func TestNewMLPNet(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 6, 4)
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{3, 2}, Out: 5, Activation: activation.SiLU})
	if err != nil {
		t.Fatal(err)
	}
	out, err := mlp.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := g.Input("y", 6)
	loss, err := nn.CrossEntropyLoss(out, y)
	if err != nil {
		t.Fatal(err)
	}
	n, u, err := NewMLPNet(train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss, Task: train.Classification}, mlp)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Pre) != 2 || n.Pre[0] != mlp.Pre[0] || n.Pre[1] != mlp.Pre[1] {
		t.Errorf("Net.Pre %v, want the MLP's two hidden pre-activations", n.Pre)
	}
	if u.Activation() != activation.SiLU || u.Layers() != 2 || u.Width(0) != 3 || u.Width(1) != 2 {
		t.Errorf("Units: %v with %d layers, widths %d, %d; want SiLU, 2 layers, 3, 2", u.Activation(), u.Layers(), u.Width(0), u.Width(1))
	}
	if _, _, err := NewMLPNet(train.Model{}, nil); err == nil {
		t.Error("a nil MLP: no error")
	}
}
