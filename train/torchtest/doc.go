// Package torchtest is the Go side of the optional PyTorch parity tests
// (nn, train, ops/activation): finding a python3 that has torch, and the
// files a parity script exchanges with the test in one directory. The test
// writes init.safetensors (its model's initial parameters),
// batches.safetensors (x.<i> and y.<i> for every step i) and config.json;
// the script writes losses.json ({"losses": [...], "norms": [...], "torch":
// version}, norms only where the test clips), torch_init.safetensors (a
// model initialized by PyTorch) and torch_forward.json ({"output": [...]},
// that model's output on x.0). The Python side of the safetensors format is
// nn/testdata/st.py.
//
// Use in a test: a Linear layer against torch.nn.Linear, trained with SGD
// (TestLinearMatchesPyTorch; testdata/linear_parity.py is its script):
//
//	py := torchtest.Python(t, "PyTorch parity") // skips the test without torch
//	g, _ := graph.New(tensor.Float64, 1)
//	fc, _ := nn.NewLinear(g, "", 3, 2) // parameters "weight" and "bias", as torch.nn.Linear's
//	x, _ := g.Input("x", 4, 3)
//	y, _ := g.Input("y", 4, 2)
//	out, _ := fc.Forward(x)
//	loss, _ := nn.MSELoss(out, y)
//	r := rng.New(1, "batches")
//	var batches []graph.NamedTensor // x.0, y.0, x.1, y.1, …
//	for i := range 5 {
//		bx, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), r, 4, 3)
//		by, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), r, 4, 2)
//		batches = append(batches, graph.NamedTensor{Name: fmt.Sprint("x.", i), Value: bx}, graph.NamedTensor{Name: fmt.Sprint("y.", i), Value: by})
//	}
//	dir := t.TempDir()
//	torchtest.WriteInputs(t, dir, g, batches, map[string]any{"in": 3, "out": 2, "lr": 0.1})
//	losses, _ := torchtest.Train(t, g, x, y, loss, batches, optim.NewSGD(0.1), 0)
//	res := torchtest.Run(t, py, "testdata/linear_parity.py", dir, len(losses))
//	torchtest.CompareLosses(t, losses, res.Losses, 1e-12)
//	torchtest.CheckTorchInit(t, dir, g, x, out, batches[0].Value, 1e-12) // PyTorch's initialization, loaded into g
package torchtest
