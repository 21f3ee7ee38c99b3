package safetensors

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

func named(name string, t *tensor.Dense) graph.NamedTensor {
	return graph.NamedTensor{Name: name, Value: t}
}

func TestRoundTripIsBitExact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	w := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1.5, -2, float32(math.Pi), 0, -0, math.SmallestNonzeroFloat32}))
	b := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{math.E, -1e-300, math.MaxFloat64}))
	if err := Save(path, []graph.NamedTensor{named("fc.weight", w), named("fc.bias", b)}, map[string]string{"step": "7"}); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["step"] != "7" || len(f.Tensors) != 2 {
		t.Fatalf("metadata %v, %d tensors", f.Metadata, len(f.Tensors))
	}
	gw, _ := f.Get("fc.weight")
	gb, _ := f.Get("fc.bias")
	for i, v := range w.Float32s() {
		if math.Float32bits(gw.Float32s()[i]) != math.Float32bits(v) {
			t.Errorf("weight[%d] = %v, want %v", i, gw.Float32s()[i], v)
		}
	}
	for i, v := range b.Float64s() {
		if math.Float64bits(gb.Float64s()[i]) != math.Float64bits(v) {
			t.Errorf("bias[%d] = %v, want %v", i, gb.Float64s()[i], v)
		}
	}
	if !gw.Shape().Eq(tensor.Shape{2, 3}) {
		t.Errorf("weight shape %v", gw.Shape())
	}
}

// A file assembled by hand from the format description loads correctly.
func TestLoadHandBuiltFile(t *testing.T) {
	header := `{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[],"data_offsets":[16,20]}}`
	var raw []byte
	raw = binary.LittleEndian.AppendUint64(raw, uint64(len(header)))
	raw = append(raw, header...)
	raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(0.25))
	raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(-3))
	raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(7.5))
	path := filepath.Join(t.TempDir(), "hand.safetensors")
	os.WriteFile(path, raw, 0o644)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Get("a")
	b, _ := f.Get("b")
	if a.Float64s()[0] != 0.25 || a.Float64s()[1] != -3 || b.Float32s()[0] != 7.5 || f.Metadata["format"] != "pt" {
		t.Errorf("decoded a=%v b=%v metadata=%v", a, b, f.Metadata)
	}
}

func TestLoadRejectsCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.safetensors")
	Save(good, []graph.NamedTensor{named("w", tensor.New(tensor.WithShape(4), tensor.WithBacking([]float32{1, 2, 3, 4})))}, nil)
	raw, _ := os.ReadFile(good)
	header := func(h string, data int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(append(b, h...), make([]byte, data)...)
	}
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":      {nil, "shorter than the 8-byte header"},
		"truncated":  {raw[:len(raw)-3], "truncated"},
		"bad length": {append(binary.LittleEndian.AppendUint64(nil, 1<<20), raw[8:]...), "does not fit"},
		"bad json":   {header(`{"w":`, 0), "not valid JSON"},
		"dtype":      {header(`{"w":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}}`, 2), "dtype I8"},
		"gap":        {header(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "do not follow"},
		"size":       {header(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), "do not hold [3] F32"},
		"trailing":   {header(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 12), "8 bytes of data after"},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, c.data, 0o644)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, c.want)
		}
	}
}

func TestCopyIntoChecksAndConverts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.safetensors")
	Save(path, []graph.NamedTensor{
		named("w", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))),
		named("optimizer.w.momentum_buffer", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{0, 0, 0, 0}))),
	}, nil)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := tensor.New(tensor.WithShape(2, 2), tensor.Of(tensor.Float64))
	if err := f.CopyInto([]graph.NamedTensor{named("w", dst)}); err == nil || !strings.Contains(err.Error(), `"optimizer.w.momentum_buffer" that the model does not have`) {
		t.Errorf("extra tensor: got %v", err)
	}
	if err := f.CopyInto([]graph.NamedTensor{named("w", dst)}, "optimizer."); err != nil {
		t.Fatal(err)
	}
	if got := dst.Float64s(); got[0] != 1 || got[3] != 4 {
		t.Errorf("converted values %v", got)
	}
	wrong := tensor.New(tensor.WithShape(4), tensor.Of(tensor.Float32))
	if err := f.CopyInto([]graph.NamedTensor{named("w", wrong)}, "optimizer."); err == nil || !strings.Contains(err.Error(), "shape (2, 2), model expects (4)") {
		t.Errorf("shape mismatch: got %v", err)
	}
	if err := f.CopyInto([]graph.NamedTensor{named("v", wrong)}, "optimizer.", "w"); err == nil || !strings.Contains(err.Error(), `no tensor "v"`) {
		t.Errorf("missing tensor: got %v", err)
	}
	nan := filepath.Join(t.TempDir(), "nan.safetensors")
	Save(nan, []graph.NamedTensor{named("w", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, math.NaN()})))}, nil)
	fn, _ := Load(nan)
	keep := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{5, 6}))
	if err := fn.CopyInto([]graph.NamedTensor{named("w", keep)}); err == nil || keep.Float64s()[0] != 5 {
		t.Errorf("NaN checkpoint: got %v, values %v", err, keep.Float64s())
	}
}

// A failed Save leaves the previous file intact and no temporary file
// behind (the write-half-way case is atomicfile's test).
func TestFailedSaveKeepsPreviousFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	if err := Save(path, []graph.NamedTensor{named("w", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2})))}, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	good := named("w", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{3, 4})))
	ints := named("i", tensor.New(tensor.WithShape(1), tensor.WithBacking([]int{1})))
	if err := Save(path, []graph.NamedTensor{good, ints}, nil); err == nil {
		t.Fatal("int tensor saved")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the previous checkpoint was modified")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the checkpoint", len(entries))
	}
}

func TestSaveRejectsBadInput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	v := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1}))
	if err := Save(p, []graph.NamedTensor{named("a", v), named("a", v)}, nil); err == nil {
		t.Error("duplicate names accepted")
	}
	if err := Save(p, []graph.NamedTensor{named("i", tensor.New(tensor.WithShape(1), tensor.WithBacking([]int{1})))}, nil); err == nil {
		t.Error("int tensor accepted")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("a failed Save left a file")
	}
}
