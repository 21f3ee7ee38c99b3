package safetensors

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// allocBudget is what decoding n input bytes may allocate in total: a
// fixed allowance plus a multiple of the input (the JSON walk and maps
// allocate per token), never anything sized by a number in the header.
func allocBudget(n int) uint64 { return 1<<20 + 256*uint64(n) }

// FuzzLoad feeds arbitrary bytes to the reader as a file of that size. It
// must never panic, never allocate more than the input justifies, and what
// it accepts must be consistent: the tensors' sizes add up to the data.
func FuzzLoad(f *testing.F) {
	f.Add(rawFile(`{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[],"data_offsets":[16,20]}}`, make([]byte, 20)))
	f.Add(rawFile(`{"w":{"dtype":"F32","shape":[4611686018427387904,2],"data_offsets":[0,0]}}`, nil))
	f.Add(rawFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)))
	f.Add(rawFile(`null`, nil))
	f.Add([]byte("        "))
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		file, err := read(bytes.NewReader(data), int64(len(data)), "fuzz", Limits{})
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > allocBudget(len(data)) {
			t.Fatalf("decoding %d bytes allocated %d bytes (budget %d)", len(data), got, allocBudget(len(data)))
		}
		if err != nil {
			return
		}
		var total int64
		for _, nt := range file.Tensors {
			if nt.Value == nil {
				t.Fatalf("tensor %q is nil", nt.Name)
			}
			size := int64(4)
			if nt.Value.Dtype() == tensor.Float64 {
				size = 8
			}
			total += int64(nt.Value.Shape().TotalSize()) * size
		}
		if hlen := int64(len(data)) - 8 - total; hlen < 0 || hlen > int64(len(data)) {
			t.Fatalf("accepted tensors of %d bytes in a %d-byte file", total, len(data))
		}
		// Accepted tensors can be copied into matching destinations.
		dst := make([]graph.NamedTensor, len(file.Tensors))
		for i, nt := range file.Tensors {
			dst[i] = graph.NamedTensor{Name: nt.Name, Value: tensor.New(tensor.WithShape(nt.Value.Shape()...), tensor.Of(tensor.Float32))}
		}
		file.CopyInto(dst) // may refuse non-finite values; must not panic
	})
}
