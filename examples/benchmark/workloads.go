package main

// The workload table: every workload is "<family>/<args>/<dtype>", the same
// name on both sides (bench_torch.py parses it the same way); a family
// says how to build its step here (train/bench), its unit and whether it
// uses the BLAS.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/bench"
)

var families = bench.Families{
	{Name: "gelu", Unit: "Melem/s", Work: bench.GELUWork, About: "GELU forward + backward on 4M elements", Build: bench.GELU},
	{Name: "copy", Unit: "Melem/s", Work: bench.GELUWork, About: "memory-bound reference for gelu: the same loads and stores (y ← x; dx ← x + up, 20 bytes/element in float32) with no arithmetic worth the name", Build: bench.Copy},
	{Name: "ffn", Unit: "ms", BLAS: true, About: "training step of the pre-LN feed-forward block: LayerNorm → Linear → GELU → Linear + residual, MSE, SGD-momentum", Build: bench.FFN, BuildBF16: bench.FFNBF16},
	{Name: "gemm", Unit: "ms", BLAS: true, About: "the six matrix products of the ffn step of the same shape, alone (2 forward, 4 backward)", Build: bench.GEMMs, BuildBF16: bench.GEMMsBF16},
	{Name: "mlp", Unit: "ms", BLAS: true, About: "training step of the GELU paper's MNIST MLP: 784 → 8 × 128 → 10, GELU, batch 128, cross-entropy, Adam lr 1e-3; fixed: one batch over and over; shuffledN: a shuffled pass over N seeded random MNIST-shaped examples, batch gathering included (ms per step). The initial weights differ (unit-norm rows here, PyTorch's default there); the work per step does not", Build: bench.MLP},
	{Name: "gpt", Unit: "tokens/s", BLAS: true, Work: bench.GPTWork, About: gptAbout, Build: bench.GPT, BuildBF16: bench.GPTBF16},
	{Name: "matmul", Unit: "GFLOP/s", BLAS: true, Paired: true, NoPeer: true, Work: bench.MatMulWork, Build: bench.MatMul,
		About: "one matrix product of the ffn or mlp step alone, C = op(A)·op(B) with op(A) m×k, op(B) k×n (args <m>x<n>x<k>-<op>, op: N or T per operand), GFLOP/s = 2·m·n·k / time; not run by PyTorch"},
	{Name: "peak", Unit: "GFLOP/s", NoPeer: true, Fastest: true, Work: bench.PeakWork, Build: bench.Peak,
		About: "the machine's peak: a register-only loop of independent FMAs (ops/gemm's PeakRun) on GOMAXPROCS threads, in the own GEMM's vector width, the fastest of at least 100 timed runs of 1–2 ms (not the median); not run by PyTorch"},
}

const gptAbout = "AdamW training step of a GPT on one fixed batch: nanoGPT's model (learned positions, pre-LN blocks, causal attention, " +
	"exact-GELU MLP 4·d, biases, tied input and output embeddings, no dropout, nanoGPT's N(0, 0.02) init with c_proj at 0.02/√(2L)), " +
	"vocabulary 91 (examples/char-gpt's), mean cross-entropy over every position, AdamW at PyTorch's defaults (lr 1e-3, β 0.9, 0.999, ε 1e-8, " +
	"weight decay 0.01 on every parameter), no clipping; args L<blocks>-d<width>-h<heads>-T<context>-B<batch>; tokens/s = batch·T / step time"

// ffnShapes are the FFN shapes measured by default, with the GEMMs of
// each; quick runs use a tiny one.
var ffnShapes = []string{"512x256x1024", "256x768x3072"}

// gptShapes are the GPT steps measured by default: 4 blocks, width 256, 8
// heads, context 128, batch 16; and examples/recompute's, 8 blocks and
// context 256, whose 8·16 (batch, head) attention products per block are
// where two pools of threads competing for the cores (OpenBLAS's and
// ops/parallel's) show. Quick runs use a tiny one.
var gptShapes = []string{"L4-d256-h8-T128-B16", "L8-d256-h8-T256-B16"}

const gptQuickShape = "L1-d16-h2-T8-B2"

// bf16Dtypes are the dtypes of the ffn, gemm and gpt workloads: float32,
// and bfloat16 (a float32 model under bfloat16 autocast on both sides)
// where GemmBF16 runs an assembly kernel (gemm.BF16Kernel), or in quick
// runs, whose tiny shapes the portable kernel runs quickly too.
func bf16Dtypes(quick bool) []string {
	if quick || gemm.BF16Kernel() != "generic" {
		return []string{"float32", "bfloat16"}
	}
	return []string{"float32"}
}

// workloadNames lists the workloads of a run; see the package comment.
func workloadNames(scaling, quick bool) []string {
	shapes, pass, gpts := ffnShapes, "shuffled10240", gptShapes
	if quick {
		shapes, pass, gpts = []string{"64x32x128"}, "shuffled1024", []string{gptQuickShape}
	}
	var w []string
	for _, dt := range []string{"float32", "float64"} {
		w = append(w, "gelu/exact/"+dt, "gelu/tanh/"+dt, "copy/gelu-traffic/"+dt)
	}
	for _, s := range shapes {
		for _, dt := range append(bf16Dtypes(quick), "float64") {
			w = append(w, "ffn/"+s+"/"+dt, "gemm/"+s+"/"+dt)
		}
	}
	w = append(w, "mlp/fixed/float32", "mlp/"+pass+"/float32")
	for _, g := range gpts {
		for _, dt := range bf16Dtypes(quick) {
			w = append(w, "gpt/"+g+"/"+dt)
		}
	}
	for _, dt := range []string{"float32", "float64"} {
		if gemm.PeakISA() != "" { // else the peak is unknown here
			w = append(w, "peak/fma/"+dt)
		}
		for _, args := range products(quick).args {
			w = append(w, "matmul/"+args+"/"+dt)
		}
	}
	if scaling && !quick {
		for _, n := range []int{64, 128, 512, 1024} {
			s := fmt.Sprintf("%dx768x3072", n)
			w = append(w, "ffn/"+s+"/float32", "gemm/"+s+"/float32")
		}
		for _, d := range []int{128, 256, 512, 1024} {
			s := fmt.Sprintf("256x%dx%d", d, 4*d)
			w = append(w, "ffn/"+s+"/float32", "gemm/"+s+"/float32")
		}
	}
	return w
}

// productSet is the matmul workloads' products, each once: their args in
// order and the steps each is in.
type productSet struct {
	args []string
	in   map[string]string // args → labels, "; "-separated
}

// products are those of the ffn steps of the run (ffnShapes; quick: its
// tiny shape) and, except in quick runs, of the mlp step.
func products(quick bool) productSet {
	shapes, ps := ffnShapes, bench.MLPProducts()
	if quick {
		shapes, ps = []string{"64x32x128"}, nil
	}
	var all []bench.Product
	for _, s := range shapes {
		f, err := bench.FFNProducts(s)
		if err != nil {
			panic(err) // the shapes above are valid
		}
		all = append(all, f...)
	}
	set := productSet{in: map[string]string{}}
	for _, p := range append(all, ps...) {
		a := p.Args()
		if _, ok := set.in[a]; !ok {
			set.args = append(set.args, a)
			set.in[a] = p.Label
		} else if !slices.Contains(strings.Split(set.in[a], "; "), p.Label) {
			set.in[a] += "; " + p.Label
		}
	}
	return set
}
