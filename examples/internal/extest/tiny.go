package extest

// What the tests of the MNIST MLP programs run: a tiny network, one worker
// and then two.

import (
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
)

// Workers is the -workers of the first and of the second run of RunTwice:
// 1, then 2, so that the compared files also show that the worker count
// changes nothing.
func Workers(first bool) int {
	if first {
		return 1
	}
	return 2
}

// TinyMLP are MNIST MLP flags small enough for a test: ReLU and GELU, one
// hidden layer of 8, batches of 16, momentum 0.9, plots at 30 dpi.
func TinyMLP() experiment.MNISTMLP {
	return experiment.MNISTMLP{Acts: experiment.Activations{activation.ReLU, activation.GELU}, Hidden: experiment.Ints{8}, Batch: 16, Momentum: 0.9, DPI: 30}
}
