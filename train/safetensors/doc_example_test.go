package safetensors_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/train/safetensors"
	"gorgonia.org/tensor"
)

// The package comment's sketch: parameters saved, loaded and copied into
// a model of another dtype.
func Example() {
	dir, _ := os.MkdirTemp("", "safetensors")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	g, _ := graph.New(tensor.Float32, 1)
	g.Param("fc.weight", graph.Normal(0, 1), 3, 4)
	if err := safetensors.Save(path, g.ParamTensors(), map[string]string{"step": "100"}); err != nil {
		fmt.Println(err)
		return
	}
	f, err := safetensors.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	g2, _ := graph.New(tensor.Float64, 2) // another seed and dtype
	g2.Param("fc.weight", graph.Zeros(), 3, 4)
	err = f.CopyInto(g2.ParamTensors()) // names, shapes checked; float32↔float64 converted
	fmt.Println(f.Metadata["step"], err)
	// Tighter caps for files from an untrusted source:
	f, err = safetensors.LoadLimits(path, safetensors.Limits{MaxHeaderBytes: 1 << 20, MaxDataBytes: 1 << 30})
	fmt.Println(err)
	// Output:
	// 100 <nil>
	// <nil>
}
