package bench

import (
	"testing"

	"gorgonia.org/tensor"
)

// gptParamsClosedForm counts nanoGPT's parameters by hand: the tied token
// table V·d, the positions T·d, per block two LayerNorms (2·2d), c_attn
// (3d² + 3d), attn c_proj (d² + d), c_fc (4d² + 4d) and mlp c_proj (4d² +
// d), that is 12d² + 13d, and ln_f (2d).
func gptParamsClosedForm(layers, d, t, vocab int) int {
	return vocab*d + t*d + layers*(12*d*d+13*d) + 2*d
}

// TestGPTParams checks that the GPT step's model has the parameter count
// of the closed form (examples/benchmark checks bench_torch.py's against
// it too: the same model on both sides).
func TestGPTParams(t *testing.T) {
	for _, c := range []struct {
		args                 string
		layers, d, heads, tc int
	}{{"L4-d256-h8-T128-B16", 4, 256, 8, 128}, {"L1-d16-h2-T8-B2", 1, 16, 2, 8}, {"L3-d24-h3-T5-B1", 3, 24, 3, 5}} {
		want := gptParamsClosedForm(c.layers, c.d, c.tc, GPTVocab)
		got, err := GPTParams(c.args)
		if err != nil || got != want {
			t.Errorf("%s: the GPT has %d parameters (%v), want %d", c.args, got, err, want)
		}
	}
	if _, err := GPTParams("L1-d16-h3-T8-B2"); err == nil {
		t.Error("GPTParams with 3 heads for width 16: no error")
	}
}

func TestBadArgs(t *testing.T) {
	for _, c := range []struct {
		build func(string, tensor.Dtype) (func() error, int, error)
		args  string
	}{{GELU, "erf"}, {FFN, "64x32"}, {GEMMs, "0x1x1"}, {MLP, "shuffled5"}, {MLP, "random"}, {Copy, "x"}, {GPT, "L1-d16-h3-T8-B2"}} {
		if _, _, err := c.build(c.args, tensor.Float32); err == nil {
			t.Errorf("building %q: no error", c.args)
		}
	}
}

// TestStepsRun builds the small steps and runs each twice; a pass over
// shuffled examples makes N/128 steps (DropLast).
func TestStepsRun(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(string, tensor.Dtype) (func() error, int, error)
		args  string
		dt    tensor.Dtype
		steps int
	}{
		{"ffn", FFN, "8x4x16", tensor.Float64, 1},
		{"gemm", GEMMs, "8x4x16", tensor.Float32, 1},
		{"gpt", GPT, "L1-d16-h2-T8-B2", tensor.Float32, 1},
		{"mlp fixed", MLP, "fixed", tensor.Float32, 1},
		{"mlp shuffled", MLP, "shuffled300", tensor.Float32, 2},
	} {
		run, steps, err := c.build(c.args, c.dt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if steps != c.steps {
			t.Errorf("%s %s: %d steps a run, want %d", c.name, c.args, steps, c.steps)
		}
		for range 2 {
			if err := run(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
	}
}

// TestCopyBytes: the copy reads x and writes y, then reads x and up and
// writes dx: 5 elements of 4 bytes (float32) or 8 (float64) per element.
func TestCopyBytes(t *testing.T) {
	for dt, want := range map[tensor.Dtype]float64{tensor.Float32: 5 * 4 * 4194304, tensor.Float64: 5 * 8 * 4194304} {
		if got := CopyBytes(Workload{Dtype: dt}); got != want {
			t.Errorf("CopyBytes(%v) = %v, want %v", dt, got, want)
		}
	}
}
