package main

// The workload table: every workload is "<family>/<args>/<dtype>", the same
// name on both sides (bench_torch.py parses it the same way), and a family
// says how to build its step here, its unit and whether it uses the BLAS.

import (
	"fmt"
	"strings"

	"gorgonia.org/tensor"
)

// geluN is the element count of the elementwise workloads.
const geluN = 4 << 20

// family is one kind of workload.
type family struct {
	name string
	// unit is "ms" (per step) when work is nil, else a throughput: work
	// per second.
	unit  string
	about string // one line for the report
	// work, for a throughput unit, is what one step processes, in the
	// unit's numerator (Melem of GELU, tokens of a GPT batch).
	work func(args string) (float64, error)
	// blas: the workload runs matrix products, so the BLAS thread count
	// and the pure-Go BLAS are worth trying.
	blas bool
	// build returns the function timed (one run) and the training steps a
	// run makes (1 except for a pass over a data set).
	build func(args string, dt tensor.Dtype) (run func() error, steps int, err error)
}

// geluWork is the elementwise workloads' work per step, in Melem.
func geluWork(string) (float64, error) { return geluN / 1e6, nil }

var families = []family{
	{name: "gelu", unit: "Melem/s", work: geluWork, about: "GELU forward + backward on 4M elements", build: buildGELU},
	{name: "copy", unit: "Melem/s", work: geluWork, about: "memory-bound reference for gelu: the same loads and stores (y ← x; dx ← x + up, 20 bytes/element in float32) with no arithmetic worth the name", build: buildCopy},
	{name: "ffn", unit: "ms", blas: true, about: "training step of the pre-LN feed-forward block: LayerNorm → Linear → GELU → Linear + residual, MSE, SGD-momentum", build: buildFFN},
	{name: "gemm", unit: "ms", blas: true, about: "the six matrix products of the ffn step of the same shape, alone (2 forward, 4 backward)", build: buildGEMM},
	{name: "mlp", unit: "ms", blas: true, about: "training step of the GELU paper's MNIST MLP: 784 → 8 × 128 → 10, GELU, batch 128, cross-entropy, Adam lr 1e-3; fixed: one batch over and over; shuffledN: a shuffled pass over N seeded random MNIST-shaped examples, batch gathering included (ms per step). The initial weights differ (unit-norm rows here, PyTorch's default there); the work per step does not", build: buildMLP},
	{name: "gpt", unit: "tokens/s", blas: true, work: gptWork, about: gptAbout, build: buildGPT},
}

// workload is a parsed workload name.
type workload struct {
	name string
	fam  *family
	args string
	dt   tensor.Dtype
	work float64 // per step, for a throughput unit; 0 for ms
}

var dtypes = map[string]tensor.Dtype{"float32": tensor.Float32, "float64": tensor.Float64}

func parseWorkload(name string) (workload, error) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return workload{}, fmt.Errorf("workload %q: want <family>/<args>/<float32|float64>", name)
	}
	dt, ok := dtypes[parts[2]]
	if !ok {
		return workload{}, fmt.Errorf("workload %q: dtype %q, want float32 or float64", name, parts[2])
	}
	for i := range families {
		if f := &families[i]; f.name == parts[0] {
			w := workload{name: name, fam: f, args: parts[1], dt: dt}
			if f.work != nil {
				var err error
				if w.work, err = f.work(w.args); err != nil {
					return workload{}, fmt.Errorf("workload %q: %w", name, err)
				}
			}
			return w, nil
		}
	}
	return workload{}, fmt.Errorf("workload %q: unknown family %q", name, parts[0])
}

// throughput reports whether w's unit is work per second (higher is
// better) rather than ms per step.
func (w workload) throughput() bool { return w.fam.work != nil }

// value converts seconds per step to the workload's unit.
func (w workload) value(s float64) float64 {
	if w.throughput() {
		return w.work / s
	}
	return s * 1e3
}

// ffnShapes are the FFN shapes measured by default, with the GEMMs of
// each; quick runs use a tiny one.
var ffnShapes = []string{"512x256x1024", "256x768x3072"}

// gptShape is the GPT step measured by default (issue 10: 4 blocks, width
// 256, 8 heads, context 128, batch 16); quick runs use a tiny one.
const gptShape, gptQuickShape = "L4-d256-h8-T128-B16", "L1-d16-h2-T8-B2"

// workloadNames lists the workloads of a run; see the package comment.
func workloadNames(scaling, quick bool) []string {
	shapes, pass, gpt := ffnShapes, "shuffled10240", gptShape
	if quick {
		shapes, pass, gpt = []string{"64x32x128"}, "shuffled1024", gptQuickShape
	}
	var w []string
	for _, dt := range []string{"float32", "float64"} {
		w = append(w, "gelu/exact/"+dt, "gelu/tanh/"+dt, "copy/gelu-traffic/"+dt)
	}
	for _, s := range shapes {
		for _, dt := range []string{"float32", "float64"} {
			w = append(w, "ffn/"+s+"/"+dt, "gemm/"+s+"/"+dt)
		}
	}
	w = append(w, "mlp/fixed/float32", "mlp/"+pass+"/float32", "gpt/"+gpt+"/float32")
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
