package safetensors

// The Python reader and writer the package doc points to (for users
// without the safetensors Python package) reads what Save writes and
// writes what Load reads.

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// stPy is the reader the package doc names, from this directory.
const stPy = "../../nn/testdata/st.py"

func TestPythonReaderRoundTrip(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "nn/testdata/st.py") {
		t.Fatal("the package doc names no Python reader for users without the safetensors package")
	}
	if _, err := os.Stat(stPy); err != nil {
		t.Fatalf("the reader the doc names: %v", err)
	}
	if testing.Short() {
		t.Skip("Python round trip skipped in -short mode (one python run)")
	}
	py := ""
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(c, "-c", "import torch, numpy").Run() == nil {
			py = c
			break
		}
	}
	if py == "" {
		t.Skip("Python round trip skipped: no python3 with torch and numpy (Debian: apt-get install python3-torch)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "go.safetensors"), filepath.Join(dir, "py.safetensors")
	f32 := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, -2.5, float32(math.Pi), 1e-40, 3e38, 0}))
	f64 := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{math.E, -1e-300, 1e300, 0.1}))
	if err := Save(in, []graph.NamedTensor{named("a.weight", f32), named("b", f64)}, map[string]string{"step": "7"}); err != nil {
		t.Fatal(err)
	}
	script := `import sys
sys.path.insert(0, sys.argv[1])
from st import load, save
d = load(sys.argv[2])
assert list(d) == ["a.weight", "b"], list(d)
assert str(d["a.weight"].dtype) == "torch.float32" and list(d["a.weight"].shape) == [2, 3]
assert str(d["b"].dtype) == "torch.float64"
save(sys.argv[3], {"b": d["b"] * 2, "a.weight": d["a.weight"]}, {"from": "python"})
`
	if msg, err := exec.Command(py, "-c", script, filepath.Dir(stPy), in, out).CombinedOutput(); err != nil {
		t.Fatalf("st.py: %v\n%s", err, msg)
	}
	f, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["from"] != "python" {
		t.Errorf("metadata %v, want from = python", f.Metadata)
	}
	b, okB := f.Get("b")
	a, okA := f.Get("a.weight")
	if !okA || !okB || !slices.Equal(a.Float32s(), f32.Float32s()) || a.Dtype() != tensor.Float32 {
		t.Fatalf("a.weight back from Python: %v", a)
	}
	for i, v := range f64.Float64s() {
		if b.Dtype() != tensor.Float64 || b.Float64s()[i] != 2*v {
			t.Fatalf("b back from Python: %v, want 2× %v", b, f64)
		}
	}
}
