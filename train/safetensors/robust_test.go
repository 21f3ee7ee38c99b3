package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// rawFile builds a safetensors file from a header and data bytes.
func rawFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// loadBytes writes raw to a file and loads it, turning a panic into an
// error so that one bad case does not hide the others.
func loadBytes(t *testing.T, raw []byte) (f *File, err error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.safetensors")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("PANIC: %v", r)
		}
	}()
	return Load(p)
}

// expectError checks that loading raw fails with an error containing want.
func expectError(t *testing.T, name string, raw []byte, want string) {
	t.Helper()
	f, err := loadBytes(t, raw)
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "PANIC") {
		n := -1
		if f != nil {
			n = len(f.Tensors)
		}
		t.Errorf("%s: got error %v (%d tensors), want an error containing %q", name, err, n, want)
	}
}

// Shapes whose element or byte count does not fit in an int64 are refused
// by name; in particular a product that wraps around to 0 must not pass as
// an empty tensor, nor one that wraps to the declared byte count.
func TestLoadRejectsOverflowingShapes(t *testing.T) {
	const two32 int64 = 1 << 32
	cases := []struct {
		name, shape string
		end         int64 // declared end offset; data holds that many bytes
	}{
		{"wraps to 0 elements", fmt.Sprintf("[%d,%d]", two32, two32), 0},
		{"wraps to 0 bytes", fmt.Sprintf("[%d,2]", int64(1)<<62), 0},
		{"bytes wrap to 4", "[5,922337203685477581]", 4}, // 4·(2⁶²+1) = 2⁶⁴+4
		{"bytes overflow", fmt.Sprintf("[%d]", int64(math.MaxInt64/2)), 0},
		{"max dims", fmt.Sprintf("[%d,%d]", int64(math.MaxInt64), int64(math.MaxInt64)), 0},
	}
	for _, c := range cases {
		h := fmt.Sprintf(`{"w":{"dtype":"F32","shape":%s,"data_offsets":[0,%d]}}`, c.shape, c.end)
		expectError(t, c.name, rawFile(h, make([]byte, c.end)), "overflow")
	}
	// A real zero in the shape is an empty tensor, not an overflow, with any
	// other dimension an int holds.
	f, err := loadBytes(t, rawFile(fmt.Sprintf(`{"w":{"dtype":"F32","shape":[0,%d],"data_offsets":[0,0]}}`, math.MaxInt), nil))
	if err != nil {
		t.Fatalf("empty tensor: %v", err)
	}
	if w, _ := f.Get("w"); w == nil || w.Shape().TotalSize() != 0 {
		t.Errorf("empty tensor loaded as %v", w)
	}
}

// Only regular files are read: a symlink to /dev/zero or a directory is
// refused up front instead of being read until memory runs out.
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat("/dev/zero"); err == nil {
		link := filepath.Join(dir, "zero.safetensors")
		if err := os.Symlink("/dev/zero", link); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("/dev/zero: got %v, want a not-a-regular-file error", err)
		}
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: got %v, want a not-a-regular-file error", err)
	}
}

// A header length beyond the cap is refused before the header is read,
// with an error that names the length and the cap (not "does not fit").
// The file is sparse: 300 MB of header, "{" and then zeros, never read.
func TestLoadRefusesHugeHeaderByLength(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.safetensors")
	const n = 300 << 20
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	binary.Write(f, binary.LittleEndian, uint64(n))
	f.WriteString("{")
	if err := f.Truncate(8 + n); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := fmt.Sprintf("header length %d exceeds the cap of %d bytes", n, 100<<20)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}

// The format forbids duplicate keys; encoding/json would silently keep the
// last one, at any depth.
func TestLoadRejectsDuplicateKeys(t *testing.T) {
	four := make([]byte, 8)
	for name, h := range map[string]string{
		"tensor":   `{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
		"field":    `{"w":{"dtype":"F32","shape":[2],"shape":[1],"data_offsets":[0,8]}}`,
		"metadata": `{"__metadata__":{"a":"1","a":"2"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"top meta": `{"__metadata__":{},"__metadata__":{"a":"1"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
	} {
		expectError(t, name, rawFile(h, four), "duplicate key")
	}
	// The error says where: the key and the object holding it.
	expectError(t, "where", rawFile(`{"__metadata__":{"a":"1","a":"2"}}`, nil), `duplicate key "a" in "__metadata__"`)
	expectError(t, "where, top", rawFile(`{"w":{},"w":{}}`, nil), `duplicate key "w" in the header`)
	expectError(t, "where, array", rawFile(`{"x":[{"k":1,"k":2}]}`, nil), `duplicate key "k" in "x"`)
}

// The header must be a JSON object of tensor entries, each with a dtype, a
// shape and two data offsets: null and other JSON values are refused.
func TestLoadRejectsMalformedHeaders(t *testing.T) {
	cases := map[string]struct{ header, want string }{
		"null":           {`null`, "header is null"},
		"array":          {`[]`, "want a JSON object"},
		"number":         {`5`, "want a JSON object"},
		"two values":     {`{} {}`, "after the header object"},
		"null entry":     {`{"w":null}`, `tensor "w": no dtype`},
		"null shape":     {`{"w":{"dtype":"F32","shape":null,"data_offsets":[0,0]}}`, `tensor "w": no shape`},
		"no offsets":     {`{"w":{"dtype":"F32","shape":[]}}`, `tensor "w": no data_offsets`},
		"three offsets":  {`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, `tensor "w": data_offsets`},
		"reversed range": {`{"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`, `tensor "w"`},
		"metadata types": {`{"__metadata__":{"a":1}}`, "__metadata__"},
	}
	for name, c := range cases {
		expectError(t, name, rawFile(c.header, make([]byte, 8)), c.want)
	}
	// A null __metadata__ is the reference implementation's "no metadata".
	if _, err := loadBytes(t, rawFile(`{"__metadata__":null}`, nil)); err != nil {
		t.Errorf("null metadata: %v", err)
	}
}

// float64 values beyond float32's range would become ±Inf in a float32
// model: refused, naming the tensor and element, and nothing is written.
func TestCopyIntoChecksFinitenessAfterConversion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.safetensors")
	big := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 1e39}))
	if err := Save(path, []graph.NamedTensor{named("w", big)}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{7, 7, 7}))
	err = f.CopyInto([]graph.NamedTensor{named("w", dst)})
	if err == nil || !strings.Contains(err.Error(), `"w" element 2`) {
		t.Errorf("got %v, want an error naming w element 2", err)
	}
	if got := dst.Float32s(); got[0] != 7 || got[2] != 7 {
		t.Errorf("destination modified to %v by a refused copy", got)
	}
	// The same values fit a float64 model.
	dst64 := tensor.New(tensor.WithShape(3), tensor.Of(tensor.Float64))
	if err := f.CopyInto([]graph.NamedTensor{named("w", dst64)}); err != nil || dst64.Float64s()[2] != 1e39 {
		t.Errorf("float64 destination: %v, %v", err, dst64.Float64s())
	}
	// The largest float32 itself converts exactly and is accepted.
	maxf := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{math.MaxFloat32}))
	Save(path, []graph.NamedTensor{named("w", maxf)}, nil)
	f, _ = Load(path)
	one := tensor.New(tensor.WithShape(1), tensor.Of(tensor.Float32))
	if err := f.CopyInto([]graph.NamedTensor{named("w", one)}); err != nil || one.Float32s()[0] != math.MaxFloat32 {
		t.Errorf("MaxFloat32: %v, %v", err, one.Float32s())
	}
}

// Views are saved in logical (row-major) order with their logical shape:
// a transposed matrix and a column slice. The expected values come from
// indexing the original matrix, not from the tensor package.
func TestSaveWritesViewsInLogicalOrder(t *testing.T) {
	const rows, cols = 3, 4
	at := func(r, c int) float64 { return float64(10*r + c) }
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		m := tensor.New(tensor.WithShape(rows, cols), tensor.Of(dt))
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				if err := m.SetAt(convertTo(dt, at(r, c)), r, c); err != nil {
					t.Fatal(err)
				}
			}
		}
		tr := m.Clone().(*tensor.Dense)
		if err := tr.T(); err != nil {
			t.Fatal(err)
		}
		sl, err := m.Slice(nil, tensor.S(1, 3))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "views.safetensors")
		if err := Save(path, []graph.NamedTensor{named("t", tr), named("s", sl.(*tensor.Dense))}, nil); err != nil {
			t.Fatal(err)
		}
		f, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var wantT, wantS []float64
		for c := 0; c < cols; c++ {
			for r := 0; r < rows; r++ {
				wantT = append(wantT, at(r, c))
			}
		}
		for r := 0; r < rows; r++ {
			for c := 1; c < 3; c++ {
				wantS = append(wantS, at(r, c))
			}
		}
		for _, c := range []struct {
			name  string
			shape tensor.Shape
			want  []float64
		}{{"t", tensor.Shape{cols, rows}, wantT}, {"s", tensor.Shape{rows, 2}, wantS}} {
			got, _ := f.Get(c.name)
			if !got.Shape().Eq(c.shape) || fmt.Sprint(graph.Float64s(got)) != fmt.Sprint(c.want) {
				t.Errorf("%v %s: saved %v %v, want %v %v", dt, c.name, got.Shape(), graph.Float64s(got), c.shape, c.want)
			}
		}
	}
}

func convertTo(dt tensor.Dtype, v float64) any {
	if dt == tensor.Float32 {
		return float32(v)
	}
	return v
}

// Nil files, tensors and destinations are errors, not panics.
func TestNilArgumentsAreErrors(t *testing.T) {
	var nilFile *File
	if _, ok := nilFile.Get("w"); ok {
		t.Error("nil File has a tensor")
	}
	if err := nilFile.CopyInto(nil); err == nil {
		t.Error("nil File: CopyInto succeeded")
	}
	path := filepath.Join(t.TempDir(), "n.safetensors")
	Save(path, []graph.NamedTensor{named("w", tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{1})))}, nil)
	f, _ := Load(path)
	if err := f.CopyInto([]graph.NamedTensor{{Name: "w"}}); err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("nil destination tensor: got %v", err)
	}
	if err := Save(path, []graph.NamedTensor{{Name: "w"}}, nil); err == nil {
		t.Error("nil source tensor saved")
	}
}

// Empty tensors (a zero in the shape) save, load and copy; gorgonia's
// Data() panics on them, so every path must avoid it.
func TestEmptyTensorsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.safetensors")
	e := tensor.New(tensor.WithShape(0, 3), tensor.Of(tensor.Float64))
	one := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{2}))
	if err := Save(path, []graph.NamedTensor{named("e", e), named("one", one)}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := []graph.NamedTensor{named("e", tensor.New(tensor.WithShape(0, 3), tensor.Of(tensor.Float32))),
		named("one", tensor.New(tensor.WithShape(1), tensor.Of(tensor.Float64)))}
	if err := noPanic(func() error { return f.CopyInto(dst) }); err != nil || dst[1].Value.Float64s()[0] != 2 {
		t.Errorf("CopyInto with an empty tensor: %v", err)
	}
}

func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return f()
}
