package probe

import (
	"fmt"

	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
)

// NewMLPNet is NewNet for a model whose hidden layers are those of mlp
// (the MLP's forward pass gives both), keeping mlp.Pre, with the Units
// that record f'(z) of its activation on its hidden widths, for
// Phase.Units.
func NewMLPNet(m train.Model, mlp *nn.MLP) (*Net, *Units, error) {
	if mlp == nil {
		return nil, nil, fmt.Errorf("probe.NewMLPNet: nil MLP")
	}
	n, err := NewNet(m, mlp.Pre)
	if err != nil {
		return nil, nil, err
	}
	u, err := NewUnits(mlp.Config.Activation, mlp.Config.Hidden...)
	if err != nil {
		return nil, nil, err
	}
	return n, u, nil
}
