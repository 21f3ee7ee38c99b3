package bench

import (
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// TestParseBFloat16: the dtype bfloat16 is a float32 workload under
// autocast, for the families with a BuildBF16 only; its name keeps the
// dtype.
func TestParseBFloat16(t *testing.T) {
	fs := Families{
		{Name: "ffn", Unit: "ms", BLAS: true, Build: FFN, BuildBF16: FFNBF16},
		{Name: "mlp", Unit: "ms", BLAS: true, Build: MLP},
	}
	w, err := fs.Parse("ffn/64x32x128/bfloat16")
	if err != nil || w.Dtype != tensor.Float32 || w.Autocast != graph.BFloat16 || w.DtypeName() != "bfloat16" || w.Key() != "ffn.64x32x128.bfloat16" {
		t.Errorf("Parse(ffn/64x32x128/bfloat16) = %+v (%v)", w, err)
	}
	if w, err := fs.Parse("ffn/64x32x128/float32"); err != nil || w.Autocast != graph.Full || w.DtypeName() != "float32" {
		t.Errorf("Parse(ffn/64x32x128/float32) = %+v (%v)", w, err)
	}
	if _, err := fs.Parse("mlp/fixed/bfloat16"); err == nil || !strings.Contains(err.Error(), "mlp has no bfloat16 variant") {
		t.Errorf("Parse(mlp/fixed/bfloat16): %v, want an error naming the family", err)
	}
}

// TestBF16StepsRun: the bfloat16 steps build and run (tiny shapes).
func TestBF16StepsRun(t *testing.T) {
	for name, build := range map[string]func(string) (func() error, int, error){
		"64x32x128": FFNBF16, "32x16x64": GEMMsBF16, "L1-d16-h2-T8-B2": GPTBF16,
	} {
		run, steps, err := build(name)
		if err != nil || steps != 1 {
			t.Fatalf("%s: %v (%d steps)", name, err, steps)
		}
		if err := run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
