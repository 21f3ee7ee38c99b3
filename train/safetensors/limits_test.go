package safetensors

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// The caps are configurable: a small header cap refuses a normal file by
// its header length, a small data cap by its data size; zero fields take
// the defaults.
func TestLoadLimitsAreConfigurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	w := tensor.New(tensor.WithShape(64), tensor.Of(tensor.Float64))
	if err := Save(path, []graph.NamedTensor{named("w", w)}, nil); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	hlen := int64(raw[0]) // < 256 for this header
	if _, err := LoadLimits(path, Limits{MaxHeaderBytes: hlen - 1}); err == nil || !strings.Contains(err.Error(), "exceeds the cap of") {
		t.Errorf("header cap %d: got %v", hlen-1, err)
	}
	if _, err := LoadLimits(path, Limits{MaxDataBytes: 64*8 - 1}); err == nil || !strings.Contains(err.Error(), "512 bytes of tensor data exceed the cap of 511") {
		t.Errorf("data cap: got %v", err)
	}
	if _, err := LoadLimits(path, Limits{MaxHeaderBytes: hlen, MaxDataBytes: 64 * 8}); err != nil {
		t.Errorf("exact caps: %v", err)
	}
	if _, err := LoadLimits(path, Limits{}); err != nil {
		t.Errorf("default caps: %v", err)
	}
}

// countingReader serves an endless stream of one byte and counts what was
// taken from it.
type countingReader struct {
	b byte
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.b
	}
	c.n += int64(len(p))
	return len(p), nil
}

// The reader takes only what the header declares: from an endless stream
// of spaces (a header length of 0x2020202020202020, and no "{" after it)
// it reads the 8 length bytes and 8 more to say what the file starts with,
// and stops; from an endless stream after a valid header it reads
// exactly the declared tensor bytes, even when the caller claims a larger
// size (and then reports the mismatch without reading on).
func TestReadTakesOnlyDeclaredBytes(t *testing.T) {
	spaces := &countingReader{b: ' '}
	if _, err := read(spaces, 1<<40, "spaces", Limits{}); err == nil || !strings.Contains(err.Error(), "is not a safetensors file") {
		t.Errorf("endless spaces: got %v", err)
	}
	if spaces.n != 16 {
		t.Errorf("read %d bytes of an endless header, want 16", spaces.n)
	}
	h := `{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}`
	zeros := &countingReader{}
	src := io.MultiReader(bytes.NewReader(rawFile(h, nil)), zeros)
	f, err := read(src, int64(8+len(h)+12), "stream", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if zeros.n > 12 || len(f.Tensors) != 1 {
		t.Errorf("read %d data bytes for a 12-byte tensor", zeros.n)
	}
	zeros.n = 0
	src = io.MultiReader(bytes.NewReader(rawFile(h, nil)), zeros)
	if _, err := read(src, 1<<40, "stream", Limits{}); err == nil || zeros.n != 0 {
		t.Errorf("claimed size 1 TiB: got %v after reading %d data bytes, want an error before reading any", err, zeros.n)
	}
}
