package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// Limits bounds what Load accepts, so that a corrupt or hostile file is
// refused with an error before memory is allocated for it. Beyond these
// caps nothing is allocated that the file's size does not justify: every
// size the header declares is checked, with overflow-checked arithmetic,
// against the bytes the file really has before anything is read.
type Limits struct {
	// MaxHeaderBytes caps the JSON header, checked against the 8-byte
	// length before the header is read. 0 means DefaultMaxHeaderBytes.
	MaxHeaderBytes int64
	// MaxDataBytes caps the tensor data (file size minus the header),
	// i.e. the memory Load will allocate for tensors. 0 means
	// DefaultMaxDataBytes.
	MaxDataBytes int64
}

const (
	// DefaultMaxHeaderBytes is 100 MB, the cap of the reference
	// implementation (a header that size describes millions of tensors).
	DefaultMaxHeaderBytes = 100 << 20
	// DefaultMaxDataBytes is 64 GiB: any model this package trains fits,
	// and an accidental multi-terabyte file is refused rather than read.
	DefaultMaxDataBytes = 64 << 30
)

func (l Limits) withDefaults() Limits {
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxDataBytes <= 0 {
		l.MaxDataBytes = DefaultMaxDataBytes
	}
	return l
}

// Load reads and validates a safetensors file with the default Limits; see
// LoadLimits.
func Load(path string) (*File, error) { return LoadLimits(path, Limits{}) }

// LoadLimits reads and validates a safetensors file. Only regular files are
// read (a symlink to /dev/zero, a directory or a FIFO is refused). The
// header length is checked against lim before the header is read; the
// header must be one JSON object with no duplicate key at any depth, whose
// entries each have a supported dtype (F64, F32, or BF16 and F16, loaded
// as float32 by exact conversion), a shape whose size does
// not overflow, and byte ranges that tile the data exactly. Only the bytes
// the header declares are read. Any violation is an error naming the file
// and, where there is one, the tensor; a file that is not safetensors at
// all (text, a torch.save archive) is called that, with its first bytes.
func LoadLimits(path string, lim Limits) (*File, error) {
	st, err := os.Stat(path) // before opening: opening a FIFO would block
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("safetensors: %s is not a regular file (mode %v)", path, st.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	// Again on the open file: the path may have been replaced meanwhile.
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("safetensors: %s is not a regular file (mode %v)", path, st.Mode())
	}
	return read(f, st.Size(), path, lim)
}

// item is a validated header entry.
type item struct {
	name       string
	stored     string // the dtype in the file
	dtype      fileDtype
	shape      []int
	begin, end int64
}

// read decodes a safetensors file of size bytes from r, reading at most
// the bytes the header declares and allocating no more than size allows.
func read(r io.Reader, size int64, path string, lim Limits) (*File, error) {
	lim = lim.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("safetensors: %s: %s", path, fmt.Sprintf(format, args...))
	}
	if size < 8 {
		return nil, bad("file is %d bytes, shorter than the 8-byte header length", size)
	}
	var lenBuf [8]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, bad("reading the header length: %v", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(lim.MaxHeaderBytes) || n > uint64(size-8) {
		// A length beyond the cap or the file is usually another kind of
		// file, whose first bytes are no length: every safetensors header
		// is a JSON object, starting with "{" (the reference reader
		// insists on it too). A few more bytes tell.
		var next [8]byte
		got, _ := io.ReadFull(r, next[:min(int64(len(next)), size-8)])
		if got == 0 || next[0] != '{' {
			start := append(lenBuf[:], next[:got]...)
			return nil, fmt.Errorf("safetensors: %s is not a safetensors file: it starts with %q%s, where a safetensors file has an 8-byte header length and then \"{\"",
				path, start, sniff(start))
		}
	}
	if n > uint64(lim.MaxHeaderBytes) {
		return nil, bad("header length %d exceeds the cap of %d bytes (Limits.MaxHeaderBytes)", n, lim.MaxHeaderBytes)
	}
	if n > uint64(size-8) {
		return nil, bad("header length %d does not fit in a %d-byte file", n, size)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, bad("reading the %d-byte header: %v", n, err)
	}
	metadata, items, err := parseHeader(hdr)
	if err != nil {
		return nil, bad("%v", err)
	}
	dataLen := size - 8 - int64(n)
	if dataLen > lim.MaxDataBytes {
		return nil, bad("%d bytes of tensor data exceed the cap of %d (Limits.MaxDataBytes)", dataLen, lim.MaxDataBytes)
	}
	if err := checkLayout(items, dataLen); err != nil {
		return nil, bad("%v", err)
	}
	f := &File{Path: path, Metadata: metadata, Dtypes: map[string]string{}}
	for _, it := range items {
		f.Dtypes[it.name] = it.stored
		t, err := readTensor(r, it)
		if err != nil {
			return nil, bad("reading tensor %q: %v (did the file change while being read?)", it.name, err)
		}
		f.Tensors = append(f.Tensors, graph.NamedTensor{Name: it.name, Value: t})
	}
	return f, nil
}

// magics are the starts of files that are often taken for safetensors,
// with what to say of them.
var magics = []struct{ prefix, what string }{
	{"PK\x03\x04", "a zip archive, as torch.save writes: in Python, safetensors.torch.save_file(torch.load(path), out) converts a state_dict"},
	{"\x80", "a Python pickle, as older torch.save writes: in Python, safetensors.torch.save_file(torch.load(path), out) converts a state_dict"},
	{"\x93NUMPY", "a NumPy .npy file"},
	{"\x89HDF\r\n\x1a\n", "an HDF5 file (Keras's .h5)"},
	{"\x1f\x8b", "gzip-compressed: decompress it first"},
}

// sniff says what kind of file begins with b, if it can tell: " (…)", or
// "".
func sniff(b []byte) string {
	for _, m := range magics {
		if bytes.HasPrefix(b, []byte(m.prefix)) {
			return " (" + m.what + ")"
		}
	}
	if len(b) > 0 && utf8.Valid(b) && !bytes.ContainsFunc(b, func(r rune) bool { return !unicode.IsPrint(r) && !unicode.IsSpace(r) }) {
		return " (text)"
	}
	return ""
}

// parseHeader checks the header's JSON and decodes its entries, sorted by
// data offset.
func parseHeader(hdr []byte) (map[string]string, []item, error) {
	if err := checkJSON(hdr); err != nil {
		return nil, nil, err
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &header); err != nil {
		return nil, nil, fmt.Errorf("header is not valid JSON: %v", err)
	}
	var metadata map[string]string
	if md, ok := header["__metadata__"]; ok {
		if err := json.Unmarshal(md, &metadata); err != nil {
			return nil, nil, fmt.Errorf("__metadata__ is not a map of strings: %v", err)
		}
		delete(header, "__metadata__")
	}
	items := make([]item, 0, len(header))
	for name, msg := range header {
		it, err := parseEntry(name, msg)
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %v", name, err)
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.begin, b.begin); c != 0 {
			return c
		}
		if c := cmp.Compare(a.end, b.end); c != 0 {
			return c
		}
		return bytes.Compare([]byte(a.name), []byte(b.name))
	})
	return metadata, items, nil
}

// parseEntry decodes one tensor entry. Fields are looked up by their exact
// name (encoding/json would also match "DTYPE"); other fields are ignored,
// as the reference implementation does.
func parseEntry(name string, msg json.RawMessage) (item, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(msg, &fields); err != nil {
		return item{}, fmt.Errorf("entry is not an object: %v", err)
	}
	it := item{name: name}
	var dtype string
	var shape, offsets []int64
	if err := decodeField(fields, "dtype", &dtype); err != nil {
		return it, err
	}
	d, ok := dtypes[dtype]
	if !ok {
		return it, fmt.Errorf("dtype %s is not supported (%s are)", dtype, readable)
	}
	it.stored, it.dtype = dtype, d
	if err := decodeField(fields, "shape", &shape); err != nil {
		return it, err
	}
	if err := decodeField(fields, "data_offsets", &offsets); err != nil {
		return it, err
	}
	if len(offsets) != 2 || offsets[0] < 0 || offsets[1] < offsets[0] {
		return it, fmt.Errorf("data_offsets %v are not a byte range [begin, end)", offsets)
	}
	it.begin, it.end = offsets[0], offsets[1]
	count, err := elements(shape)
	if err != nil {
		return it, err
	}
	nbytes, ok := mulChecked(count, d.size)
	if !ok {
		return it, fmt.Errorf("shape %v of %s overflows: more than %d bytes", shape, dtype, int64(math.MaxInt64))
	}
	if it.end-it.begin != nbytes {
		return it, fmt.Errorf("bytes [%d, %d) do not hold %v %s values (%d bytes)", it.begin, it.end, shape, dtype, nbytes)
	}
	it.shape = make([]int, len(shape))
	for i, v := range shape {
		it.shape[i] = int(v) // elements checked each fits an int
	}
	return it, nil
}

// decodeField unmarshals fields[key] into dst; missing and null are errors.
func decodeField(fields map[string]json.RawMessage, key string, dst any) error {
	raw, ok := fields[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return fmt.Errorf("no %s", key)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	return nil
}

// elements returns the number of elements of shape. Every dimension and
// the product of the non-zero ones must fit in an int: a product that
// wraps around (to 0, say) is refused, not taken for an empty tensor.
func elements(shape []int64) (int64, error) {
	count, zero := int64(1), false
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d == 0 {
			zero = true
			continue
		}
		var ok bool
		if count, ok = mulChecked(count, d); !ok || count > math.MaxInt {
			return 0, fmt.Errorf("shape %v overflows: more than %d elements", shape, math.MaxInt)
		}
	}
	if zero {
		return 0, nil
	}
	return count, nil
}

// mulChecked returns a·b for a, b ≥ 0, and false if it overflows an int64.
func mulChecked(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > math.MaxInt64/b {
		return 0, false
	}
	return a * b, true
}

// checkLayout checks that the sorted byte ranges tile [0, dataLen).
func checkLayout(items []item, dataLen int64) error {
	var next int64
	for _, it := range items {
		if it.begin != next {
			return fmt.Errorf("tensor %q: bytes [%d, %d) do not follow the previous tensor, which ends at %d", it.name, it.begin, it.end, next)
		}
		if it.end > dataLen {
			return fmt.Errorf("tensor %q ends at byte %d but the data has %d bytes (truncated file?)", it.name, it.end, dataLen)
		}
		next = it.end
	}
	if next != dataLen {
		return fmt.Errorf("%d bytes of data after the last tensor", dataLen-next)
	}
	return nil
}

// decoder returns the backing slice of count elements and a fill function
// that decodes each whole width-byte element of b with from, storing them
// from index at on and returning the next index.
func decoder[T float32 | float64](count, width int, from func([]byte) T) (any, fillFunc) {
	v := make([]T, count)
	return v, func(b []byte, at int) int {
		for i := 0; i+width <= len(b); i += width {
			v[at] = from(b[i:])
			at++
		}
		return at
	}
}

func f64FromBytes(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
func f32FromBytes(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// bf16FromBytes converts a bfloat16, float32's top 16 bits, exactly.
func bf16FromBytes(b []byte) float32 {
	return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16)
}

// f16FromBytes converts an IEEE half (1 sign, 5 exponent bits with bias
// 15, 10 fraction bits) exactly: float32 has more of both. A subnormal
// half, m·2⁻²⁴, is a normal float32; Inf and NaN keep their sign and NaN
// its payload.
func f16FromBytes(b []byte) float32 {
	h := uint32(binary.LittleEndian.Uint16(b))
	sign, exp, frac := h>>15<<31, h>>10&0x1f, h&0x3ff
	switch exp {
	case 0: // zero or subnormal
		return math.Float32frombits(sign | math.Float32bits(float32(frac)*0x1p-24))
	case 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// readTensor reads exactly it's bytes from r, converting them in chunks so
// that only the tensor itself is allocated.
func readTensor(r io.Reader, it item) (*tensor.Dense, error) {
	count := int((it.end - it.begin) / it.dtype.size)
	shape := it.shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	var chunk [1 << 15]byte
	backing, fill := it.dtype.decode(count)
	left, at := it.end-it.begin, 0
	for left > 0 {
		n := int64(len(chunk)) // a multiple of 8
		if left < n {
			n = left
		}
		if _, err := io.ReadFull(r, chunk[:n]); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		at = fill(chunk[:n], at)
		left -= n
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing)), nil
}
