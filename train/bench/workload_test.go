package bench

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// testFamilies is a small table in the shape of examples/benchmark's.
var testFamilies = Families{
	{Name: "gelu", Unit: "Melem/s", Work: GELUWork, Build: GELU},
	{Name: "copy", Unit: "Melem/s", Work: GELUWork, Build: Copy},
	{Name: "ffn", Unit: "ms", BLAS: true, Build: FFN},
	{Name: "gemm", Unit: "ms", BLAS: true, Build: GEMMs},
	{Name: "mlp", Unit: "ms", BLAS: true, Build: MLP},
	{Name: "gpt", Unit: "tokens/s", BLAS: true, Work: GPTWork, Build: GPT},
	{Name: "matmul", Unit: "GFLOP/s", BLAS: true, Paired: true, NoPeer: true, Work: MatMulWork, Build: MatMul},
	{Name: "peak", Unit: "GFLOP/s", NoPeer: true, Fastest: true, Work: PeakWork, Build: Peak},
}

func TestParse(t *testing.T) {
	w, err := testFamilies.Parse("ffn/64x32x128/float64")
	if err != nil || w.Family.Name != "ffn" || w.Args != "64x32x128" || w.Dtype != tensor.Float64 || w.Key() != "ffn.64x32x128.float64" {
		t.Errorf("Parse(ffn/64x32x128/float64) = %+v (%v)", w, err)
	}
	for _, bad := range []string{"gelu/exact", "gelu/exact/float16", "conv/3x3/float32", "ffn/64x32/float32/x",
		"gpt/L1-d16/float32", "gpt/L1-d16-h3-T8-B2/float32", "gpt/L0-d16-h2-T8-B2/float32", "gpt/L1-d16-h2-T8-B2x/float32", "gpt/L1-d16-h2-T8-B-2/float32"} {
		if _, err := testFamilies.Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if _, err := testFamilies.ParseAll([]string{"gelu/exact/float32", "conv/3x3/float32"}); err == nil {
		t.Error("ParseAll with an unknown family: no error")
	}
	if got := testFamilies.Names(); got != "gelu, copy, ffn, gemm, mlp, gpt, matmul, peak" {
		t.Errorf("Names() = %q", got)
	}
}

// TestValue: a gpt step processes batch·T tokens, so one of 0.5 s runs at
// 2·batch·T tokens/s; an ms unit is the seconds × 1000; GELU's work is
// 4·2²⁰ elements = 4.194304 Melem.
func TestValue(t *testing.T) {
	for _, c := range []struct {
		name       string
		seconds    float64
		want       float64
		throughput bool
	}{
		{"gpt/L1-d16-h2-T8-B2/float32", 0.5, 32, true},
		{"ffn/8x4x16/float32", 0.5, 500, false},
		{"gelu/exact/float32", 2, 4.194304 / 2, true},
	} {
		w, err := testFamilies.Parse(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Value(c.seconds); got != c.want || w.Throughput() != c.throughput {
			t.Errorf("%s at %v s per step: %v (throughput unit %v), want %v (%v)", c.name, c.seconds, got, w.Throughput(), c.want, c.throughput)
		}
	}
}

func TestSelect(t *testing.T) {
	const gpt = "gpt/L1-d16-h2-T8-B2/float32"
	names := []string{"gelu/exact/float32", "mlp/fixed/float32", "mlp/shuffled1024/float32", gpt}
	for _, c := range []struct {
		only []string
		want []string
	}{
		{nil, names},
		{[]string{"gpt"}, []string{gpt}},
		{[]string{"mlp", " gpt"}, []string{"mlp/fixed/float32", "mlp/shuffled1024/float32", gpt}},
		{[]string{"gpt/L2-d32-h4-T16-B4/float64", "gpt"}, []string{"gpt/L2-d32-h4-T16-B4/float64", gpt}},
		{[]string{"gpt", "gpt"}, []string{gpt}},
	} {
		got, err := testFamilies.Select(names, c.only)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Select(%q) = %q (%v), want %q", c.only, got, err, c.want)
		}
	}
	for _, bad := range [][]string{{"conv"}, {""}, {"copy"}} { // copy: a family with no workload in names
		if got, err := testFamilies.Select(names, bad); err == nil {
			t.Errorf("Select(%q) = %q, want an error", bad, got)
		}
	}
}

func TestFamiliesOf(t *testing.T) {
	ws, err := testFamilies.ParseAll([]string{"mlp/fixed/float32", "gelu/exact/float32", "mlp/shuffled1024/float32"})
	if err != nil {
		t.Fatal(err)
	}
	fs := FamiliesOf(ws)
	if len(fs) != 2 || fs[0].Name != "mlp" || fs[1].Name != "gelu" {
		t.Errorf("FamiliesOf = %v, want mlp then gelu", fs)
	}
}
