package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/geluproject/gelu/train/internal/atomicfile"
)

// The package comment's sketch: both files in place, no temporary left.
func Example() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	data := []byte("weights")
	err := atomicfile.WriteFile(filepath.Join(dir, "model.safetensors"), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	f, err := atomicfile.Create(filepath.Join(dir, "metrics.csv")) // for streaming writers
	if err != nil {
		fmt.Println(err)
		return
	}
	io.WriteString(f, "step,loss\n")
	err = f.Commit() // or f.Abort(): readers see the old file or the whole new one
	names, _ := os.ReadDir(dir)
	fmt.Println(len(names), err)
	// Output: 2 <nil>
}
