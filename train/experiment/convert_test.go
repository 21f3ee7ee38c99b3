package experiment

import (
	"slices"
	"testing"
)

func TestConvert(t *testing.T) {
	ids := []int{0, 7, 90, 1 << 20}
	f := Convert[float64](ids)
	if want := []float64{0, 7, 90, 1048576}; !slices.Equal(f, want) {
		t.Errorf("Convert[float64](%v) = %v, want %v", ids, f, want)
	}
	if back := Convert[int](f); !slices.Equal(back, ids) {
		t.Errorf("round trip gives %v, want %v", back, ids)
	}
	if got := Convert[int]([]float64{2.9, -2.9}); !slices.Equal(got, []int{2, -2}) {
		t.Errorf("Convert[int] truncates as int(v) does: got %v, want [2 -2]", got)
	}
	if got := Convert[int]([]float64(nil)); len(got) != 0 {
		t.Errorf("nil input: %v", got)
	}
}
