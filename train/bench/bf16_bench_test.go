package bench

import (
	"slices"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

// BenchmarkAutocastPaired times the float32 step and its bfloat16
// autocast twin alternately, one step each per iteration, so that both see
// the same load on a shared machine, and reports each one's median step
// and their ratio:
//
//	nice -n 10 go test ./train/bench -run '^$' -bench AutocastPaired -benchtime 20x
func BenchmarkAutocastPaired(b *testing.B) {
	type twin struct {
		name     string
		f32, b16 func() (func() error, int, error)
	}
	for _, w := range []twin{
		{"ffn/512x256x1024", func() (func() error, int, error) { return FFN("512x256x1024", tensor.Float32) }, func() (func() error, int, error) { return FFNBF16("512x256x1024") }},
		{"ffn/256x768x3072", func() (func() error, int, error) { return FFN("256x768x3072", tensor.Float32) }, func() (func() error, int, error) { return FFNBF16("256x768x3072") }},
		{"gpt/L4-d256-h8-T128-B16", func() (func() error, int, error) { return GPT("L4-d256-h8-T128-B16", tensor.Float32) }, func() (func() error, int, error) { return GPTBF16("L4-d256-h8-T128-B16") }},
	} {
		b.Run(w.name, func(b *testing.B) {
			f32, _, err := w.f32()
			if err != nil {
				b.Fatal(err)
			}
			b16, _, err := w.b16()
			if err != nil {
				b.Fatal(err)
			}
			for range Warmup {
				if err := f32(); err != nil {
					b.Fatal(err)
				}
				if err := b16(); err != nil {
					b.Fatal(err)
				}
			}
			var t32, t16 []float64
			timed := func(run func() error) float64 {
				t0 := time.Now()
				if err := run(); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0).Seconds()
			}
			for b.Loop() {
				t32 = append(t32, timed(f32))
				t16 = append(t16, timed(b16))
			}
			m32, m16 := Median(t32), Median(t16)
			b.ReportMetric(1e3*m32, "f32-ms")
			b.ReportMetric(1e3*m16, "bf16-ms")
			b.ReportMetric(m32/m16, "f32/bf16")
			b.ReportMetric(slices.Min(t32)/slices.Min(t16), "f32/bf16-min")
		})
	}
}
