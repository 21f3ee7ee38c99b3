package safetensors

// BF16 and F16 tensors against PyTorch's own conversion to float32
// (testdata/half_torch.py wrote the file) and against values derived by
// hand from the formats' definitions.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

const torchHalfFile = "testdata/half_torch.safetensors"

func float32s(t *testing.T, f *File, name string) []float32 {
	t.Helper()
	v, ok := f.Get(name)
	if !ok {
		t.Fatalf("%s: no tensor %q", f.Path, name)
	}
	d, ok := v.Data().([]float32)
	if !ok {
		t.Fatalf("%q loaded as %v, want float32", name, v.Dtype())
	}
	return d
}

// The file's BF16 and F16 tensors load as float32 holding, bit for bit,
// what PyTorch's .float() gives, and copy exactly into float32 and
// float64 models.
func TestHalfFloatsLoadAsTorchConvertsThem(t *testing.T) {
	f, err := Load(torchHalfFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, half := range []string{"bf16", "f16"} {
		got, want := float32s(t, f, half), float32s(t, f, half+"_f32")
		if len(got) != 20 || len(got) != len(want) {
			t.Fatalf("%s: %d values, torch's conversion %d", half, len(got), len(want))
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("%s[%d] = %v (%#08x), torch converts it to %v (%#08x)", half, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
		if stored := f.Dtypes[half]; stored != strings.ToUpper(half) {
			t.Errorf("Dtypes[%q] = %q, want %q", half, stored, strings.ToUpper(half))
		}
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			dst := tensor.New(tensor.Of(dt), tensor.WithShape(4, 5))
			extra := []string{"bf16", "f16"} // every other tensor of the file
			if err := f.CopyInto([]graph.NamedTensor{{Name: half, Value: dst}}, extra...); err != nil {
				t.Fatalf("%s into %v: %v", half, dt, err)
			}
			for i, w := range want {
				var g float64
				switch d := dst.Data().(type) {
				case []float32:
					g = float64(d[i])
				case []float64:
					g = d[i]
				}
				if g != float64(w) || math.Signbit(g) != math.Signbit(float64(w)) {
					t.Errorf("%s into %v: element %d is %v, want %v", half, dt, i, g, w)
				}
			}
		}
	}
}

// halfFile is a file with one tensor of dtype holding every 16-bit
// pattern, 0 to 65535.
func halfFile(dtype string) []byte {
	data := make([]byte, 0, 2*65536)
	for p := range 65536 {
		data = binary.LittleEndian.AppendUint16(data, uint16(p))
	}
	return rawFile(fmt.Sprintf(`{"x":{"dtype":%q,"shape":[65536],"data_offsets":[0,%d]}}`, dtype, len(data)), data)
}

// Every bit pattern of both formats converts as PyTorch converts it (NaNs
// compared as NaN, not by payload): the hash of the conversion equals the
// one half_torch.py recorded.
func TestHalfFloatsEveryBitPattern(t *testing.T) {
	ref, err := Load(torchHalfFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, dtype := range []string{"BF16", "F16"} {
		f, err := loadBytes(t, halfFile(dtype))
		if err != nil {
			t.Fatal(err)
		}
		var bits []byte
		finite := 0
		for _, v := range float32s(t, f, "x") {
			b := math.Float32bits(v)
			if v != v {
				b = 0x7fc00000
			}
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				finite++
			}
			bits = binary.LittleEndian.AppendUint32(bits, b)
		}
		sum := sha256.Sum256(bits)
		key := strings.ToLower(dtype) + "_all_f32_sha256"
		if got, want := hex.EncodeToString(sum[:]), ref.Metadata[key]; got != want {
			t.Errorf("%s: SHA-256 of the conversion of every pattern is %s, torch's %s", dtype, got, want)
		}
		// Exponent all ones is Inf or NaN: 2·2^7 of bf16's patterns, 2·2^10 of f16's.
		if want := map[string]int{"BF16": 65536 - 256, "F16": 65536 - 2048}[dtype]; finite != want {
			t.Errorf("%s: %d finite values, want %d", dtype, finite, want)
		}
	}
}

// Values derived from the formats' definitions: bf16 is float32's top 16
// bits (sign, 8 exponent bits with bias 127, 7 fraction bits); f16 has 5
// exponent bits with bias 15 and 10 fraction bits, subnormals m·2⁻²⁴.
func TestHalfFloatsHandDerived(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := map[string][]struct {
		bits uint16
		want float64
	}{
		"BF16": {
			{0x0000, 0}, {0x8000, negZero}, {0x3f80, 1}, {0xc020, -2.5},
			{0x0001, math.Ldexp(1, -133)}, {0x007f, math.Ldexp(127, -133)}, {0x8001, -math.Ldexp(1, -133)},
			{0x0080, math.Ldexp(1, -126)}, {0x7f7f, math.Ldexp(255, 120)}, {0x3eab, math.Ldexp(171, -9)},
			{0x7f80, math.Inf(1)}, {0xff80, math.Inf(-1)},
		},
		"F16": {
			{0x0000, 0}, {0x8000, negZero}, {0x3c00, 1}, {0xc000, -2},
			{0x0001, math.Ldexp(1, -24)}, {0x03ff, math.Ldexp(1023, -24)}, {0x8200, -math.Ldexp(512, -24)},
			{0x0400, math.Ldexp(1, -14)}, {0x7bff, 65504}, {0x3555, math.Ldexp(1365, -12)},
			{0x7c00, math.Inf(1)}, {0xfc00, math.Inf(-1)},
		},
	}
	for dtype, cs := range cases {
		var data []byte
		for _, c := range cs {
			data = binary.LittleEndian.AppendUint16(data, c.bits)
		}
		f, err := loadBytes(t, rawFile(fmt.Sprintf(`{"x":{"dtype":%q,"shape":[%d],"data_offsets":[0,%d]}}`, dtype, len(cs), len(data)), data))
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range float32s(t, f, "x") {
			if w := cs[i].want; float64(v) != w || math.Signbit(float64(v)) != math.Signbit(w) {
				t.Errorf("%s %#04x = %v, want %v", dtype, cs[i].bits, v, w)
			}
		}
	}
}

// Every finite BF16 and F16 value has an exact float32 and float64
// equivalent, so only NaN and ±Inf are refused, as in every dtype, by
// CopyInto, naming the element and the file's dtype.
func TestHalfFloatsNonFiniteRefused(t *testing.T) {
	for _, c := range []struct {
		dtype string
		bits  uint16
		want  string
	}{
		{"BF16", 0x7fc0, "element 1 is NaN (BF16 in the file), not a finite float32"},
		{"BF16", 0xff80, "element 1 is -Inf (BF16 in the file), not a finite float64"},
		{"F16", 0x7c00, "element 1 is +Inf (F16 in the file), not a finite float32"},
		{"F16", 0xfe00, "element 1 is NaN (F16 in the file), not a finite float64"},
	} {
		data := binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, 0x3c00), c.bits)
		f, err := loadBytes(t, rawFile(fmt.Sprintf(`{"w":{"dtype":%q,"shape":[2],"data_offsets":[0,4]}}`, c.dtype), data))
		if err != nil {
			t.Fatal(err)
		}
		dt := tensor.Float32
		if strings.HasSuffix(c.want, "float64") {
			dt = tensor.Float64
		}
		dst := tensor.New(tensor.Of(dt), tensor.WithShape(2))
		if err := f.CopyInto([]graph.NamedTensor{{Name: "w", Value: dst}}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %#04x into %v: %v, want an error containing %q", c.dtype, c.bits, dt, err, c.want)
		}
	}
}

// A file that is not safetensors at all says so, with what it starts
// with, instead of reading its first bytes as a header length to be capped.
func TestNotASafetensorsFile(t *testing.T) {
	for _, c := range []struct {
		name    string
		content string
		want    []string
	}{
		{"text", "# weights of my model\nlayer1 0.5 0.25\n", []string{`starts with "# weights of my "`, "(text)"}},
		{"zip (torch.save)", "PK\x03\x04\x14\x00\x00\x00\x08\x00archive/data.pkl", []string{`"PK\x03\x04`, "torch.save", "safetensors.torch.save_file"}},
		{"pickle", "\x80\x02}q\x00(X\x06\x00\x00\x00weightq\x01", []string{"pickle", "torch.save"}},
		{"numpy", "\x93NUMPY\x01\x00v\x00{'descr': '<f4'", []string{"NumPy"}},
		{"json", `{"w": [1, 2, 3]}`, []string{`starts with "{\"w\": [1, 2, 3]}"`, "(text)"}},
	} {
		_, err := loadBytes(t, []byte(c.content))
		if err == nil || !strings.Contains(err.Error(), "is not a safetensors file") || strings.Contains(err.Error(), "MaxHeaderBytes") {
			t.Errorf("%s: %v, want an error saying it is not a safetensors file, not suggesting a larger limit", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v does not contain %q", c.name, err, w)
			}
		}
	}
	// A safetensors file whose header is larger than the cap still says
	// so, with the fix.
	big := rawFile(`{"__metadata__":{"x":"`+strings.Repeat("y", 200)+`"}}`, nil)
	p := filepath.Join(t.TempDir(), "big.safetensors")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil {
		t.Fatalf("a 200-byte metadata value: %v", err)
	}
	if _, err := LoadLimits(p, Limits{MaxHeaderBytes: 64}); err == nil || !strings.Contains(err.Error(), "Limits.MaxHeaderBytes") {
		t.Errorf("a header over the cap: %v, want the cap named", err)
	}
}

// Other dtypes are refused, naming those that are read.
func TestUnsupportedDtypeNamesTheSupported(t *testing.T) {
	_, err := loadBytes(t, rawFile(`{"w":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	if err == nil || !strings.Contains(err.Error(), "dtype I32 is not supported (F64, F32, BF16 and F16 are)") {
		t.Errorf("I32: %v", err)
	}
}
