// Package graphtest holds helpers for tests that move float64 numbers in
// and out of the float32 and float64 tensors and graphs of several
// packages (nn, optim, train/probe, train/torchtest), as net/http/httptest
// does for HTTP. MustDense and MustSet panic on bad arguments, following
// Go's Must convention: in a test a panic fails the test. Library code
// uses graph.FromFloat64s and graph.SetFloat64s, which return errors.
//
// Use in a test:
//
//	g, _ := graph.New(tensor.Float32, 1)
//	xNode, _ := g.Input("x", 2, 3)
//	outNode, _ := activation.ReLU.Apply(xNode)
//	x := graphtest.MustDense(tensor.Float32, []int{2, 3}, []float64{1, -2, 3, -4, 5, -6})
//	got := graphtest.Output(t, g, xNode, outNode, x) // compile, set, run, read
//	if want := []float64{1, 0, 3, 0, 5, 0}; !slices.Equal(got, want) {
//		t.Errorf("ReLU(x) = %v, want %v", got, want)
//	}
package graphtest
