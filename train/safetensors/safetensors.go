package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/train/internal/atomicfile"
	"gorgonia.org/tensor"
)

// fileDtype is a safetensors dtype this package reads: its element size,
// the tensor dtype it loads as, and how elements decode. BF16 and F16 load
// as float32, which holds every one of their values exactly.
type fileDtype struct {
	size   int64
	dtype  tensor.Dtype
	decode func(count int) (backing any, fill fillFunc)
}

// fillFunc decodes the whole elements of b into the tensor from index at
// on and returns the next index.
type fillFunc func(b []byte, at int) int

// dtypes are the safetensors dtypes read, by name; readable lists them for
// messages, widest first.
var (
	dtypes = map[string]fileDtype{
		"F64":  {8, tensor.Float64, func(n int) (any, fillFunc) { return decoder(n, 8, f64FromBytes) }},
		"F32":  {4, tensor.Float32, func(n int) (any, fillFunc) { return decoder(n, 4, f32FromBytes) }},
		"BF16": {2, tensor.Float32, func(n int) (any, fillFunc) { return decoder(n, 2, bf16FromBytes) }},
		"F16":  {2, tensor.Float32, func(n int) (any, fillFunc) { return decoder(n, 2, f16FromBytes) }},
	}
	readable = "F64, F32, BF16 and F16"
)

// written are the dtypes Save writes, the tensor dtypes the package works in.
var written = map[tensor.Dtype]string{tensor.Float32: "F32", tensor.Float64: "F64"}

func dtypeName(dt tensor.Dtype) (string, int64, error) {
	if name, ok := written[dt]; ok {
		return name, dtypes[name].size, nil
	}
	return "", 0, fmt.Errorf("dtype %v is not supported (float32 and float64 are)", dt)
}

type entry struct {
	Dtype       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// Save writes tensors (float32 or float64) and metadata to path atomically
// (see the package doc). Names must be unique and non-empty. Views (a
// transposed or sliced tensor) are written in their logical row-major
// order, with their logical shape.
func Save(path string, tensors []graph.NamedTensor, metadata map[string]string) error {
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var offset int64
	seen := map[string]bool{}
	for _, t := range tensors {
		if t.Name == "" || t.Name == "__metadata__" || seen[t.Name] {
			return fmt.Errorf("safetensors: invalid or duplicate tensor name %q", t.Name)
		}
		seen[t.Name] = true
		if t.Value == nil {
			return fmt.Errorf("safetensors: tensor %q is nil", t.Name)
		}
		dt, size, err := dtypeName(t.Value.Dtype())
		if err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
		}
		n := int64(t.Value.Shape().TotalSize()) * size // in memory already: cannot overflow
		shape := t.Value.Shape()
		if len(shape) == 0 || (len(shape) == 1 && shape[0] == 1 && t.Value.IsScalar()) {
			shape = tensor.Shape{}
		}
		header[t.Name] = entry{Dtype: dt, Shape: append([]int{}, shape...), DataOffsets: [2]int64{offset, offset + n}}
		offset += n
	}
	hj, err := json.Marshal(header) // map keys are sorted: the file is deterministic
	if err != nil {
		return fmt.Errorf("safetensors: encoding header: %w", err)
	}
	// Pad the header with spaces to a multiple of 8 bytes, as the reference
	// writer does, so the data starts aligned.
	if pad := (8 - len(hj)%8) % 8; pad > 0 {
		hj = append(hj, strings.Repeat(" ", pad)...)
	}
	err = atomicfile.WriteFile(path, func(w io.Writer) error {
		if err := binary.Write(w, binary.LittleEndian, uint64(len(hj))); err != nil {
			return err
		}
		if _, err := w.Write(hj); err != nil {
			return err
		}
		for _, t := range tensors {
			if err := writeData(w, t.Value); err != nil {
				return fmt.Errorf("tensor %q: %w", t.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return nil
}

// writeData writes t's elements in logical row-major order. Data() is the
// memory order, which differs for a lazily transposed tensor or a slice;
// the iterator maps logical positions to memory.
func writeData(w io.Writer, t *tensor.Dense) error {
	if t.Shape().TotalSize() == 0 {
		return nil // and Data() would panic on an empty tensor
	}
	buf := make([]byte, 0, 1<<16)
	put := func(bits uint64, size int) error {
		if size == 4 {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(bits))
		} else {
			buf = binary.LittleEndian.AppendUint64(buf, bits)
		}
		if len(buf)+8 > cap(buf) {
			_, err := w.Write(buf)
			buf = buf[:0]
			return err
		}
		return nil
	}
	var bits func(i int) uint64
	size := 8
	switch d := t.Data().(type) {
	case []float32:
		bits, size = func(i int) uint64 { return uint64(math.Float32bits(d[i])) }, 4
	case []float64:
		bits = func(i int) uint64 { return math.Float64bits(d[i]) }
	case float32: // a scalar's Data is its value
		bits, size = func(int) uint64 { return uint64(math.Float32bits(d)) }, 4
	case float64:
		bits = func(int) uint64 { return math.Float64bits(d) }
	default:
		return fmt.Errorf("unsupported data %T", d)
	}
	if t.RequiresIterator() || t.IsView() {
		it := t.Iterator()
		for i, err := it.Start(); err == nil; i, err = it.Next() {
			if err := put(bits(i), size); err != nil {
				return err
			}
		}
	} else {
		for i := range t.Shape().TotalSize() {
			if err := put(bits(i), size); err != nil {
				return err
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// File is a loaded safetensors file.
type File struct {
	Path     string
	Metadata map[string]string
	Tensors  []graph.NamedTensor // in file order, float32 or float64
	// Dtypes is each tensor's dtype in the file, by name: "F32", "F64",
	// or "BF16" and "F16", which are loaded as float32 by exact conversion.
	Dtypes map[string]string
}

// Get returns the tensor with the given name.
func (f *File) Get(name string) (*tensor.Dense, bool) {
	if f == nil {
		return nil, false
	}
	for _, t := range f.Tensors {
		if t.Name == name {
			return t.Value, true
		}
	}
	return nil, false
}

// CopyInto copies the file's tensors into dst, matched by name: every dst
// tensor must be present with the same shape; float32 and float64 are
// converted into dst's dtype. Tensors in the file that dst does not name
// are an error unless allowExtra lists their name prefix (e.g. "optimizer.").
// Nothing is written unless every tensor matches and every value is finite
// after conversion (a float64 beyond float32's range would become ±Inf).
func (f *File) CopyInto(dst []graph.NamedTensor, allowExtra ...string) error {
	if f == nil {
		return fmt.Errorf("safetensors: CopyInto on a nil *File")
	}
	want := map[string]bool{}
	for _, d := range dst {
		if d.Value == nil {
			return fmt.Errorf("safetensors: CopyInto: destination tensor %q is nil", d.Name)
		}
		if _, _, err := dtypeName(d.Value.Dtype()); err != nil {
			return fmt.Errorf("safetensors: CopyInto: destination %q: %w", d.Name, err)
		}
		src, ok := f.Get(d.Name)
		if !ok {
			return fmt.Errorf("safetensors: %s has no tensor %q (model expects %v)", f.Path, d.Name, d.Value.Shape())
		}
		scalars := src.Shape().TotalSize() == 1 && d.Value.Shape().TotalSize() == 1
		if !scalars && !graph.SameShape(src.Shape(), d.Value.Shape()) {
			return fmt.Errorf("safetensors: %s has %q with shape %v, model expects %v", f.Path, d.Name, src.Shape(), d.Value.Shape())
		}
		if i, v, bad := firstNonFinite(src, d.Value.Dtype()); bad {
			stored := ""
			if dt := f.Dtypes[d.Name]; dt == "BF16" || dt == "F16" {
				stored = " (" + dt + " in the file)"
			}
			return fmt.Errorf("safetensors: %s: %q element %d is %v%s, not a finite %v", f.Path, d.Name, i, v, stored, d.Value.Dtype())
		}
		want[d.Name] = true
	}
	for _, t := range f.Tensors {
		if want[t.Name] {
			continue
		}
		extra := true
		for _, p := range allowExtra {
			if strings.HasPrefix(t.Name, p) {
				extra = false
			}
		}
		if extra {
			return fmt.Errorf("safetensors: %s has tensor %q that the model does not have", f.Path, t.Name)
		}
	}
	for _, d := range dst {
		src, _ := f.Get(d.Name)
		convert(d.Value, src)
	}
	return nil
}

// values yields t's elements (float32 or float64) as float64, in memory
// order (loaded tensors are never views).
func values(t *tensor.Dense) iter.Seq2[int, float64] {
	return func(yield func(int, float64) bool) {
		if t.Shape().TotalSize() == 0 {
			return // Data() panics on an empty tensor
		}
		switch d := t.Data().(type) {
		case []float32:
			for i, v := range d {
				if !yield(i, float64(v)) {
					return
				}
			}
		case []float64:
			for i, v := range d {
				if !yield(i, v) {
					return
				}
			}
		}
	}
}

func convert(dst, src *tensor.Dense) {
	if dst.Shape().TotalSize() == 0 {
		return
	}
	switch dd := dst.Data().(type) {
	case []float32:
		for i, v := range values(src) {
			dd[i] = float32(v)
		}
	case []float64:
		for i, v := range values(src) {
			dd[i] = v
		}
	}
}

// firstNonFinite finds the first element of t that is not finite once
// converted to dt.
func firstNonFinite(t *tensor.Dense, dt tensor.Dtype) (int, float64, bool) {
	for i, v := range values(t) {
		c := v
		if dt == tensor.Float32 {
			c = float64(float32(v))
		}
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return i, v, true
		}
	}
	return 0, 0, false
}
