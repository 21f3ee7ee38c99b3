package main

// The workloads themselves, run in a child process by measure.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/optim"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const geluN = 4 << 20

func runChild(w string, reps int) error {
	step, err := build(w)
	if err != nil {
		return err
	}
	for i := 0; i < 2; i++ {
		if err := step(); err != nil {
			return err
		}
	}
	times := make([]float64, reps)
	for i := range times {
		t0 := time.Now()
		if err := step(); err != nil {
			return err
		}
		times[i] = time.Since(t0).Seconds()
	}
	sort.Float64s(times)
	return json.NewEncoder(os.Stdout).Encode(result{Seconds: times[len(times)/2], PeakMB: peakRSS(), BLAS: gemm.Name()})
}

// build parses a workload name (see the package comment) into a step.
func build(w string) (func() error, error) {
	parts := strings.Split(w, "/")
	if len(parts) != 3 {
		return nil, fmt.Errorf("unknown workload %q", w)
	}
	dt := tensor.Float32
	if parts[2] == "float64" {
		dt = tensor.Float64
	}
	if parts[0] == "gelu" {
		act := map[string]activation.Activation{"exact": activation.GELU, "tanh": activation.GELUTanh}[parts[1]]
		if dt == tensor.Float32 {
			return geluStep[float32](act), nil
		}
		return geluStep[float64](act), nil
	}
	var tokens, d, dff int
	if _, err := fmt.Sscanf(parts[1], "%dx%dx%d", &tokens, &d, &dff); err != nil {
		return nil, fmt.Errorf("workload %q: %w", w, err)
	}
	g, err := graph.New(dt, 1)
	if err != nil {
		return nil, err
	}
	if parts[0] == "gemm" {
		return gemmStep(g, tokens, d, dff)
	}
	return ffnStep(g, tokens, d, dff)
}

// setRandom binds seeded N(0, 1) data to the input n.
func setRandom(m *graph.Machine, n *G.Node, seed uint64) error {
	v, err := graph.NewTensor(n.Dtype(), graph.Normal(0, 1), rng.New(seed, "benchmark"), n.Shape()...)
	if err != nil {
		return err
	}
	return m.Set(n, v)
}

func geluStep[T graph.Float](act activation.Activation) func() error {
	r := rng.New(1, "gelu")
	x, up, y, dx := make([]T, geluN), make([]T, geluN), make([]T, geluN), make([]T, geluN)
	for i := range x {
		x[i], up[i] = T(3*r.Normal()), T(r.Normal())
	}
	return func() error {
		if err := activation.Forward(act, y, x); err != nil {
			return err
		}
		return activation.Backward(act, dx, x, up)
	}
}

// ffnStep is one SGD-momentum training step of the pre-LN block.
func ffnStep(g *graph.Graph, tokens, d, dff int) (func() error, error) {
	f, err := nn.NewFeedForward(g, "ffn", nn.FeedForwardConfig{Dim: d, Hidden: dff})
	if err != nil {
		return nil, err
	}
	x, err := g.Input("x", tokens, d)
	if err != nil {
		return nil, err
	}
	y, err := g.Input("y", tokens, d)
	if err != nil {
		return nil, err
	}
	out, err := f.Forward(x)
	if err != nil {
		return nil, err
	}
	loss, err := nn.MSELoss(out, y)
	if err != nil {
		return nil, err
	}
	m, err := g.Compile(loss)
	if err != nil {
		return nil, err
	}
	if err := setRandom(m, x, 1); err != nil {
		return nil, err
	}
	if err := setRandom(m, y, 2); err != nil {
		return nil, err
	}
	opt, params := &optim.SGD{LearningRate: 1e-3, Momentum: 0.9}, g.ParamTensors()
	return func() error {
		if err := m.Run(); err != nil {
			return err
		}
		grads, err := m.Grads()
		if err != nil {
			return err
		}
		return opt.Step(params, grads)
	}, nil
}

// gemmStep runs the six matrix products of a step of the block (two
// forward, four backward) and nothing else.
func gemmStep(g *graph.Graph, tokens, d, dff int) (func() error, error) {
	in := func(name string, shape ...int) *G.Node { n, _ := g.Input(name, shape...); return n }
	x, w1, w2 := in("x", tokens, d), in("w1", dff, d), in("w2", d, dff)
	h, gy, gh := in("h", tokens, dff), in("gy", tokens, d), in("gh", tokens, dff)
	var outs []*G.Node
	for _, p := range []struct {
		a, b   *G.Node
		ta, tb bool
	}{{x, w1, false, true}, {h, w2, false, true}, {gy, w2, false, false}, {gy, h, true, false}, {gh, w1, false, false}, {gh, x, true, false}} {
		n, err := fused.MatMul(p.a, p.b, p.ta, p.tb)
		if err != nil {
			return nil, err
		}
		outs = append(outs, n)
	}
	m, err := g.Compile(nil, graph.Keep(outs...))
	if err != nil {
		return nil, err
	}
	for i, n := range g.Inputs() {
		if err := setRandom(m, n, uint64(i)); err != nil {
			return nil, err
		}
	}
	return m.Run, nil
}

// peakRSS reads the process's peak resident set size (Linux), in MB.
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb float64
		if _, err := fmt.Sscanf(sc.Text(), "VmHWM: %f kB", &kb); err == nil {
			return kb / 1024
		}
	}
	return 0
}
