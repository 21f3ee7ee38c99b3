package graph_test

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// FuzzMachineSet binds fuzzer-chosen tensors to an input and runs the
// weightedSum machine (loss = Σ c ⊙ x through fused.Linear, which reads the
// bound memory directly). The fuzzer picks the input's shape, the tensor's
// dtype and logical shape, its layout (contiguous, a transposed view or a
// column slice of a wider tensor) and its values, possibly with a NaN or
// ±Inf. Set must either refuse it with an error (dtype or shape mismatch,
// non-finite value) or give exactly Σ c·x over the logical elements,
// computed here in float64: the values are small integers, so every sum is
// exact in float32 too.
//
// The seed corpus is in testdata/fuzz/FuzzMachineSet; run with
//
//	go test -run '^$' -fuzz '^FuzzMachineSet$' -fuzztime 20s ./graph
func FuzzMachineSet(f *testing.F) {
	f.Add(uint8(3), uint8(2), uint8(3), uint8(2), uint8(1), uint8(0), uint8(0), []byte{1, 2, 3, 4, 5, 6})
	f.Add(uint8(3), uint8(2), uint8(3), uint8(2), uint8(0), uint8(1), uint8(0), []byte{1, 2, 3, 4, 5, 6})
	f.Add(uint8(2), uint8(4), uint8(2), uint8(4), uint8(2), uint8(2), uint8(3), []byte{9, 8, 7})
	f.Add(uint8(2), uint8(2), uint8(2), uint8(3), uint8(0), uint8(0), uint8(0), []byte{})
	f.Add(uint8(1), uint8(1), uint8(1), uint8(1), uint8(5), uint8(0), uint8(1), []byte{0x80})
	f.Fuzz(func(t *testing.T, rows, cols, vrows, vcols, dtypeSel, layout, special uint8, vals []byte) {
		r, c := 1+int(rows%5), 1+int(cols%5)     // the input's shape
		vr, vc := 1+int(vrows%5), 1+int(vcols%5) // the tensor's logical shape
		dtypes := []tensor.Dtype{tensor.Float32, tensor.Float64, tensor.Int}
		idt, vdt := dtypes[int(dtypeSel)%2], dtypes[int(dtypeSel/2)%3]
		// Logical element (i, j): a small integer from vals, or one
		// non-finite value placed by special.
		logical := func(i, j int) float64 {
			k := i*vc + j
			if special > 0 && int(special-1)%(vr*vc) == k {
				return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[int(special)%3]
			}
			if k < len(vals) {
				return float64(int8(vals[k]))
			}
			return float64(k % 7)
		}
		var v *tensor.Dense
		switch layout % 3 {
		case 0: // contiguous
			v = fill(vdt, vr, vc, logical)
		case 1: // the transpose of a vc×vr tensor
			v = fill(vdt, vc, vr, func(i, j int) float64 { return logical(j, i) })
			if err := v.T(); err != nil {
				t.Fatal(err)
			}
		case 2: // columns 1..vc of a vr×(vc+2) tensor
			wide := fill(vdt, vr, vc+2, func(i, j int) float64 {
				if j == 0 || j == vc+1 {
					return math.NaN() // outside the view: must not be seen
				}
				return logical(i, j-1)
			})
			s, err := wide.Slice(nil, tensor.S(1, vc+1))
			if err != nil {
				t.Fatal(err)
			}
			v = s.(*tensor.Dense)
		}

		m, x := weightedSum(t, idt, r, c)
		err := m.Set(x, v)
		finite := true
		for i := range vr {
			for j := range vc {
				finite = finite && !math.IsNaN(logical(i, j)) && !math.IsInf(logical(i, j), 0)
			}
		}
		if vdt == tensor.Int {
			finite = true // ints have no NaN; the dtype is what must be refused
		}
		// v.Shape(), not (vr, vc): slicing one column leaves a vector of
		// shape (vr), which must be refused for an input (vr, 1).
		valid := idt == vdt && graph.SameShape(v.Shape(), tensor.Shape{r, c}) && finite
		if !valid {
			if err == nil {
				t.Fatalf("Set accepted %v %v (layout %d, finite %v) for input %v (%d, %d)", vdt, v.Shape(), layout%3, finite, idt, r, c)
			}
			return
		}
		if err != nil {
			t.Fatalf("Set refused a valid %v %v (layout %d): %v", vdt, v.Shape(), layout%3, err)
		}
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		got, err := m.Loss()
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for i := range r {
			for j := range c {
				want += float64(1+i*c+j) * logical(i, j)
			}
		}
		if got != want {
			t.Fatalf("loss %v, want Σ c·x = %v (%v %d×%d, layout %d)", got, want, vdt, r, c, layout%3)
		}
	})
}

// fill returns a contiguous rows×cols tensor of dtype dt (float32, float64
// or int) with element (i, j) = f(i, j); a non-finite value becomes 0 in an
// int tensor.
func fill(dt tensor.Dtype, rows, cols int, f func(i, j int) float64) *tensor.Dense {
	if dt != tensor.Int {
		return denseOf(dt, rows, cols, f)
	}
	v := tensor.New(tensor.Of(dt), tensor.WithShape(rows, cols))
	for i := range rows {
		for j := range cols {
			if x := f(i, j); !math.IsNaN(x) && !math.IsInf(x, 0) {
				v.Ints()[i*cols+j] = int(x)
			}
		}
	}
	return v
}
