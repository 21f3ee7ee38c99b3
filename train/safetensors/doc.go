// Package safetensors reads and writes the safetensors format
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length, a JSON header mapping each tensor name to its dtype, shape and
// byte range, optional "__metadata__" strings, then the raw little-endian
// tensor bytes. PyTorch reads these files with safetensors.torch.load_file
// and load_state_dict; a plain reader is ~20 lines of Python.
//
//	err := safetensors.Save("model.safetensors", g.ParamTensors(), map[string]string{"step": "100"})
//	f, err := safetensors.Load("model.safetensors")
//	err = f.CopyInto(g.ParamTensors()) // names, shapes checked; float32↔float64 converted
//
// Save writes a temporary file, syncs it and renames it over the target, so
// a crash never leaves a truncated file where a good one was.
package safetensors
