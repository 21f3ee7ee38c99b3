package fused_test

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	"gorgonia.org/tensor"
)

// Cross-entropy over token ids with padding targets of −1 left out, as
// nanoGPT's F.cross_entropy(logits, targets, ignore_index=-1): with equal
// logits every counted row costs log 4, whatever the ignored rows hold.
func ExampleCrossEntropy_ignoreIndex() {
	g, _ := graph.New(tensor.Float64, 1)
	logits, _ := g.Param("logits", graph.Zeros(), 3, 4)
	targets, _ := g.Input("targets", 3)
	loss, _ := fused.CrossEntropy(logits, targets, fused.IgnoreIndex(-1))
	m, _ := g.Compile(loss)
	m.SetIDs(targets, []int{2, -1, 0})
	m.Run()
	l, _ := m.Loss()
	d, _ := m.Grad(logits)
	fmt.Printf("loss %.4f = log 4: %t\n", l, math.Abs(l-math.Log(4)) < 1e-15)
	fmt.Println(d.Float64s()[4:8]) // the ignored row
	// Output:
	// loss 1.3863 = log 4: true
	// [0 0 0 0]
}
