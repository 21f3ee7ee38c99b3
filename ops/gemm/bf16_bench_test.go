package gemm

// Throughput of the bf16 product against the own float32 GEMM on the
// project's shapes, in GFLOP/s (2·m·n·k per product):
//
//	nice -n 10 go test ./ops/gemm -run '^$' -bench GemmBF16 -benchtime 1s -count 3
//
// Each shape runs the float32 GEMM (f32), the bf16 product of float32
// operands (rounded as they are packed: what mixed-precision training
// does) and of operands already in bfloat16. GELU_BENCH_THREADS=1 runs on
// one thread; GELU_BF16_KERNEL picks the bf16 path. cpu-GFLOP/s is GFLOP
// per CPU-second of the process, steadier on a shared machine.
// testdata/bf16_matmul_torch.py times the same products in PyTorch (float32,
// under CPU autocast, and on bfloat16 operands), as installed or at chosen
// intra-op and BLAS thread counts.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"gorgonia.org/tensor"
)

// bf16BenchShapes are ownBenchShapes (the FFN and MNIST layers, a square
// product) and the products of a GPT training step: tokens T·B, width d,
// hidden 4d (the QKV, attention-output and MLP layers, forward and both
// backward products), per-head attention QKᵀ and ·V (T×T×d/h), and the
// LM head over a 65-character vocabulary.
func bf16BenchShapes() []ownShape {
	s := ownBenchShapes()
	gpt := func(prefix string, tokens, T, d, heads int) {
		layer := func(name string, in, out int) {
			s = append(s,
				ownShape{name: fmt.Sprintf("%s/%s_fwd_%dx%dx%d", prefix, name, tokens, out, in), tB: true, m: tokens, n: out, k: in},
				ownShape{name: fmt.Sprintf("%s/%s_dX_%dx%dx%d", prefix, name, tokens, in, out), m: tokens, n: in, k: out},
				ownShape{name: fmt.Sprintf("%s/%s_dW_%dx%dx%d", prefix, name, out, in, tokens), tA: true, m: out, n: in, k: tokens},
			)
		}
		layer("qkv", d, 3*d)
		layer("proj", d, d)
		layer("fc", d, 4*d)
		layer("fcproj", 4*d, d)
		layer("head", d, 65)
		hd := d / heads
		s = append(s,
			ownShape{name: fmt.Sprintf("%s/attn_QKt_%dx%dx%d", prefix, T, T, hd), tB: true, m: T, n: T, k: hd},
			ownShape{name: fmt.Sprintf("%s/attn_PV_%dx%dx%d", prefix, T, hd, T), m: T, n: hd, k: T},
		)
	}
	gpt("gpt_L4d256T128B16", 16*128, 128, 256, 8)
	gpt("gpt_d256T256B16", 16*256, 256, 256, 8)
	return s
}

func BenchmarkGemmBF16(b *testing.B) {
	if v := os.Getenv("GELU_BENCH_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("GELU_BENCH_THREADS=%q: %v", v, err)
		}
		prev := ownThreadCount()
		defer func() { _ = Own{}.SetThreads(prev) }()
		if err := (Own{}).SetThreads(n); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("f32: %s; bf16: %s", Own{}.Name(), BF16Name())
	threads := ownThreadCount()
	p32, err32 := PeakGFLOPS(tensor.Float32, threads)
	p16, err16 := PeakBF16GFLOPS(threads)
	b.Logf("peak on %d thread(s): float32 FMA %.0f GFLOP/s (%v), VDPBF16PS %.0f GFLOP/s (%v)", threads, p32, err32, p16, err16)
	for _, s := range bf16BenchShapes() {
		b.Run(s.name+"/f32", func(b *testing.B) { bf16Bench(b, s, "f32") })
		b.Run(s.name+"/bf16", func(b *testing.B) { bf16Bench(b, s, "bf16") })
		b.Run(s.name+"/bf16in", func(b *testing.B) { bf16Bench(b, s, "bf16in") })
	}
}

func bf16Bench(b *testing.B, s ownShape, kind string) {
	r := rand.New(rand.NewPCG(3, 4))
	x, y, z := make([]float32, s.m*s.k), make([]float32, s.k*s.n), make([]float32, s.m*s.n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range y {
		y[i] = float32(r.NormFloat64())
	}
	xb, yb := bf16ToSlice(x), bf16ToSlice(y)
	lda, ldb := s.k, s.n
	if s.tA {
		lda = s.m
	}
	if s.tB {
		ldb = s.k
	}
	cpu0 := ownCPUTime()
	for b.Loop() {
		var err error
		switch kind {
		case "f32":
			Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, x, lda, y, ldb, 0, z, s.n)
		case "bf16":
			err = GemmBF16(s.tA, s.tB, s.m, s.n, s.k, 1, x, lda, y, ldb, 0, z, s.n)
		default:
			err = GemmBF16(s.tA, s.tB, s.m, s.n, s.k, 1, xb, lda, yb, ldb, 0, z, s.n)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu := ownCPUTime() - cpu0
	flop := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
	b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(flop/cpu.Seconds()/1e9, "cpu-GFLOP/s")
}
