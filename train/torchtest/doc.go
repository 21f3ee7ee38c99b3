// Package torchtest is the Go side of the optional PyTorch parity tests
// (nn, train): finding a python3 that has torch, and the files a parity
// script exchanges with the test in one directory. The test writes
// init.safetensors (its model's initial parameters), batches.safetensors
// (x.<i> and y.<i> for every step i) and config.json; the script writes
// losses.json ({"losses": [...], "norms": [...], "torch": version}, norms
// only where the test clips), torch_init.safetensors (a model initialized
// by PyTorch) and torch_forward.json ({"output": [...]}, that model's
// output on x.0). The Python side of the safetensors format is
// nn/testdata/st.py.
//
// Use in a test:
//
//	py := torchtest.Python(t, "PyTorch parity")
//	dir := t.TempDir()
//	torchtest.WriteInputs(t, dir, g, batches, config)
//	// ... train the Go model on batches, collecting losses ...
//	res := torchtest.Run(t, py, "testdata/script.py", dir, steps)
//	torchtest.CompareLosses(t, losses, res.Losses, 1e-10)
//	torchtest.CheckTorchInit(t, dir, g2, x2, out2, batches[0].Value, 1e-12)
package torchtest
