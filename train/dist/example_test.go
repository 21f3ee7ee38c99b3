package dist_test

import (
	"context"
	"fmt"
	"log"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/dist"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A data-parallel step of a loop of one's own, the package
// documentation's sketch, run here as a process alone; under mpirun, Open
// gives the job's communicator and the same code averages over the ranks.
func Example() {
	c, err := dist.Open(false) // the MPI job's under mpirun; here a process alone
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	const n = 8 // the global batch
	lo, hi, _ := dist.Shard(n, c.Rank(), c.Size())
	g, m, x, y := linearModel(hi - lo) // a model of this rank's rows
	params := g.ParamTensors()
	if err := dist.CheckModel(c, params); err != nil {
		log.Fatal(err)
	}
	red, _ := dist.NewReducer(c, params, dist.Options{})
	red.SetShare(hi-lo, n)
	m.Set(x, filled(hi-lo, 3, 1)) // rows [lo, hi) of the global batch
	m.Set(y, filled(hi-lo, 1, 0))
	m.Run() // forward and backward
	grads, _ := m.Grads()
	if err := red.Wait(context.Background(), grads); err != nil {
		c.Abort(1)
	}
	opt := &optim.SGD{LearningRate: 0.1}
	opt.Step(params, grads)
	// loss = mean((1.5 − 0)²); dw_k = 2·1.5·1 = 3; w = 0.5 − 0.1·3.
	fmt.Printf("%.4f\n", params[0].Value.Float64s())
	// Output: [0.2000 0.2000 0.2000]
}

// linearModel is p = x·wᵀ with the mean squared error, w = 0.5, on
// batches of rows rows of 3 features.
func linearModel(rows int) (*graph.Graph, *graph.Machine, *G.Node, *G.Node) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", rows, 3)
	y, _ := g.Input("y", rows, 1)
	w, _ := g.Param("w", graph.Constant(0.5), 1, 3)
	p, _ := fused.Linear(x, w, nil)
	loss, _ := fused.MSELoss(p, y)
	m, _ := g.Compile(loss)
	return g, m, x, y
}

// filled is a rows × cols tensor of v.
func filled(rows, cols int, v float64) *tensor.Dense {
	t := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(rows, cols))
	for i := range t.Float64s() {
		t.Float64s()[i] = v
	}
	return t
}
