// Package safetensors reads and writes the safetensors format
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length, a JSON header mapping each tensor name to its dtype, shape and
// byte range, optional "__metadata__" strings, then the raw little-endian
// tensor bytes. PyTorch reads these files with safetensors.torch.load_file
// and load_state_dict. Without the safetensors Python package,
// nn/testdata/st.py in this module reads and writes them with numpy and
// torch alone, in some 60 lines (F32 and F64, the dtypes Save writes):
// with its directory on sys.path, "from st import load, save"; load(path)
// returns the tensors by name, as load_state_dict takes them, and
// save(path, tensors, metadata) writes a dict of tensors and metadata
// strings (clone tied weights first, as train.LoadWeights shows).
//
//	dir, _ := os.MkdirTemp("", "safetensors")
//	defer os.RemoveAll(dir)
//	path := filepath.Join(dir, "model.safetensors")
//	g, _ := graph.New(tensor.Float32, 1)
//	g.Param("fc.weight", graph.Normal(0, 1), 3, 4)
//	if err := safetensors.Save(path, g.ParamTensors(), map[string]string{"step": "100"}); err != nil {
//		fmt.Println(err)
//		return
//	}
//	f, err := safetensors.Load(path)
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	g2, _ := graph.New(tensor.Float64, 2) // another seed and dtype
//	g2.Param("fc.weight", graph.Zeros(), 3, 4)
//	err = f.CopyInto(g2.ParamTensors()) // names, shapes checked; float32↔float64 converted
//	fmt.Println(f.Metadata["step"], err)
//	// Tighter caps for files from an untrusted source:
//	f, err = safetensors.LoadLimits(path, safetensors.Limits{MaxHeaderBytes: 1 << 20, MaxDataBytes: 1 << 30})
//	fmt.Println(err)
//
// Save writes a temporary file, syncs it and renames it over the target, so
// a crash never leaves a truncated file where a good one was; temporary
// files a killed Save left behind are removed by the next Save of the same
// path. Views (transposed or sliced tensors) are written in logical order.
//
// Load treats the file as untrusted input. It reads only regular files; it
// checks the header length against Limits.MaxHeaderBytes (default 100 MB)
// before reading the header, and the data size against
// Limits.MaxDataBytes (default 64 GiB); it refuses a header that is not
// one JSON object, that has a duplicate key anywhere (the format forbids
// them, and encoding/json would silently keep the last), or whose shapes
// overflow when multiplied out (products are computed with overflow
// checks, so a product that wraps to 0 is not an empty tensor); and it
// reads exactly the bytes the header declares, so nothing is allocated
// beyond what the file's size justifies. CopyInto checks every value is
// finite after conversion to the destination's dtype.
//
// Tensors stored as F32 or F64 load as such; BF16 and F16 tensors (Hugging
// Face checkpoints are often bf16) load as float32, converted exactly:
// every bf16 and f16 value, subnormals included, is a float32 value, so
// they copy exactly into float32 and float64 models, and only NaN and ±Inf
// are refused, as in every dtype. File.Dtypes says what each tensor was in
// the file. Save writes F32 and F64, the dtypes the package computes in.
// Other dtypes (integers, bool, 8-bit floats) are refused, by name.
package safetensors
