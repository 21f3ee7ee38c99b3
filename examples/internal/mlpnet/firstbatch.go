package mlpnet

import (
	"fmt"
	"github.com/geluproject/gelu/train/experiment"

	"github.com/geluproject/gelu/datasets"
	"gorgonia.org/tensor"
)

// FirstBatch returns the inputs of the first training batch a run with
// this seed sees: batch 0 of epoch 0 of the shuffled experiment.Loader(d, batch,
// true, seed). Probes of an untrained network (InitRMS) measure it.
func FirstBatch(d *datasets.Dataset, batch int, seed uint64) (*tensor.Dense, error) {
	if d == nil {
		return nil, fmt.Errorf("mlpnet.FirstBatch: nil dataset, want one with at least %d examples", batch)
	}
	l, err := experiment.Loader(d, batch, true, seed)
	if err != nil {
		return nil, err
	}
	b, err := l.Batch(0, 0)
	return b.X, err
}
