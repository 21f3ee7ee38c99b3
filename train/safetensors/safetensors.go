package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// maxHeader bounds the JSON header we are willing to read (100 MB, as the
// reference implementation).
const maxHeader = 100 << 20

type entry struct {
	Dtype       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// Save writes tensors (float32 or float64) and metadata to path atomically.
// Names must be unique and non-empty.
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
		dt, size, err := dtypeOf(t.Value.Dtype())
		if err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
		}
		n := int64(t.Value.Shape().TotalSize()) * size
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
	return writeAtomic(path, func(w io.Writer) error {
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
}

func dtypeOf(dt tensor.Dtype) (string, int64, error) {
	switch dt {
	case tensor.Float32:
		return "F32", 4, nil
	case tensor.Float64:
		return "F64", 8, nil
	}
	return "", 0, fmt.Errorf("dtype %v is not supported (float32 and float64 are)", dt)
}

func writeData(w io.Writer, t *tensor.Dense) error {
	buf := make([]byte, 0, 1<<16)
	flush := func() error {
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	switch d := t.Data().(type) {
	case []float32:
		for _, v := range d {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	case []float64:
		for _, v := range d {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			if len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	default:
		return fmt.Errorf("unsupported data %T", d)
	}
	return flush()
}

// writeAtomic writes path through a temporary file in the same directory,
// synced before it is renamed over path.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("safetensors: writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("safetensors: writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("safetensors: syncing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename itself durable
		d.Sync()
		d.Close()
	}
	return nil
}

// File is a loaded safetensors file.
type File struct {
	Path     string
	Metadata map[string]string
	Tensors  []graph.NamedTensor // in file order, float32 or float64
}

// Load reads and validates a safetensors file: header size and JSON, dtypes
// (F32 and F64 are supported), shapes against byte ranges, and that the
// ranges tile the data exactly. Any violation is an error naming the file
// and the tensor.
func Load(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("safetensors: %s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(raw) < 8 {
		return nil, bad("file is %d bytes, shorter than the 8-byte header length", len(raw))
	}
	n := binary.LittleEndian.Uint64(raw)
	if n > maxHeader || n > uint64(len(raw)-8) {
		return nil, bad("header length %d does not fit in a %d-byte file", n, len(raw))
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		return nil, bad("header is not valid JSON: %v", err)
	}
	data := raw[8+n:]
	f := &File{Path: path}
	if md, ok := header["__metadata__"]; ok {
		if err := json.Unmarshal(md, &f.Metadata); err != nil {
			return nil, bad("__metadata__ is not a map of strings: %v", err)
		}
		delete(header, "__metadata__")
	}
	type item struct {
		name string
		e    entry
	}
	var items []item
	for name, msg := range header {
		var e entry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, bad("tensor %q: %v", name, err)
		}
		items = append(items, item{name, e})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].e.DataOffsets[0] < items[j].e.DataOffsets[0] })
	var next int64
	for _, it := range items {
		e := it.e
		size := int64(0)
		switch e.Dtype {
		case "F32":
			size = 4
		case "F64":
			size = 8
		default:
			return nil, bad("tensor %q has dtype %s; only F32 and F64 are supported", it.name, e.Dtype)
		}
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return nil, bad("tensor %q has shape %v", it.name, e.Shape)
			}
			count *= int64(d)
		}
		if e.DataOffsets[0] != next || e.DataOffsets[1]-e.DataOffsets[0] != count*size {
			return nil, bad("tensor %q: bytes [%d, %d) do not follow the previous tensor at %d or do not hold %v %s values", it.name, e.DataOffsets[0], e.DataOffsets[1], next, e.Shape, e.Dtype)
		}
		if e.DataOffsets[1] > int64(len(data)) {
			return nil, bad("tensor %q ends at byte %d but the data has %d bytes (truncated file?)", it.name, e.DataOffsets[1], len(data))
		}
		next = e.DataOffsets[1]
		f.Tensors = append(f.Tensors, graph.NamedTensor{Name: it.name, Value: decode(e, data[e.DataOffsets[0]:e.DataOffsets[1]])})
	}
	if next != int64(len(data)) {
		return nil, bad("%d bytes of data after the last tensor", int64(len(data))-next)
	}
	return f, nil
}

func decode(e entry, b []byte) *tensor.Dense {
	shape := e.Shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	if e.Dtype == "F32" {
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

// Get returns the tensor with the given name.
func (f *File) Get(name string) (*tensor.Dense, bool) {
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
// Nothing is written unless every tensor matches and every value is finite.
func (f *File) CopyInto(dst []graph.NamedTensor, allowExtra ...string) error {
	want := map[string]bool{}
	for _, d := range dst {
		src, ok := f.Get(d.Name)
		if !ok {
			return fmt.Errorf("safetensors: %s has no tensor %q (model expects %v)", f.Path, d.Name, d.Value.Shape())
		}
		if !graph.SameShape(src.Shape(), d.Value.Shape()) && !(src.Shape().TotalSize() == 1 && d.Value.Shape().TotalSize() == 1) {
			return fmt.Errorf("safetensors: %s has %q with shape %v, model expects %v", f.Path, d.Name, src.Shape(), d.Value.Shape())
		}
		if i, v, bad := firstNonFinite(src); bad {
			return fmt.Errorf("safetensors: %s: %q element %d is %v", f.Path, d.Name, i, v)
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

func convert(dst, src *tensor.Dense) {
	switch dd := dst.Data().(type) {
	case []float32:
		switch sd := src.Data().(type) {
		case []float32:
			copy(dd, sd)
		case []float64:
			for i, v := range sd {
				dd[i] = float32(v)
			}
		}
	case []float64:
		switch sd := src.Data().(type) {
		case []float64:
			copy(dd, sd)
		case []float32:
			for i, v := range sd {
				dd[i] = float64(v)
			}
		}
	}
}

func firstNonFinite(t *tensor.Dense) (int, float64, bool) {
	switch d := t.Data().(type) {
	case []float32:
		for i, v := range d {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return i, f, true
			}
		}
	case []float64:
		for i, v := range d {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return i, v, true
			}
		}
	}
	return 0, 0, false
}
