package dist_test

import (
	"context"
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/dist"
	"gorgonia.org/tensor"
)

// A data-parallel step as in the package documentation, run here as one
// process (Single); under mpirun, dist.Init gives the job's communicator
// and the same code averages over the ranks.
func Example() {
	const n, features = 8, 3 // global batch
	c := dist.Single()
	defer c.Close()
	g, _ := graph.New(tensor.Float64, 1)
	lo, hi, _ := dist.Shard(n, c.Rank(), c.Size())
	x, _ := g.Input("x", hi-lo, features)
	y, _ := g.Input("y", hi-lo, 1)
	w, _ := g.Param("w", graph.Constant(0.5), 1, features)
	loss, _ := fused.MSELoss(must(fused.Linear(x, w, nil)), y)
	m, _ := g.Compile(loss)
	defer m.Close()

	params := g.ParamTensors()
	if err := dist.CheckModel(c, params); err != nil {
		fmt.Println(err)
		return
	}
	red, _ := dist.NewReducer(c, params, dist.Options{})
	defer red.Close()
	red.SetShare(hi-lo, n)

	xs := make([]float64, (hi-lo)*features)
	for i := range xs {
		xs[i] = 1
	}
	m.Set(x, tensor.New(tensor.WithShape(hi-lo, features), tensor.WithBacking(xs)))
	m.Set(y, tensor.New(tensor.WithShape(hi-lo, 1), tensor.WithBacking(make([]float64, hi-lo))))
	m.Run()
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

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
