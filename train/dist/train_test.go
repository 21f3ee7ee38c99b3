package dist

// Data-parallel training against one process: N ranks, each on its shard
// of every global batch, against one process on the whole global batch
// (equal within a rounding bound derived below) and against one process
// that accumulates the shards' gradients in rank order (bit-identical in
// the deterministic mode). Skipping the all-reduce must break both.

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/internal/roundoff"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const (
	trainSeed  = 11
	trainSteps = 6
)

// model is a compiled graph for one batch size.
type model struct {
	g    *graph.Graph
	m    *graph.Machine
	x, y *G.Node
	opt  *optim.SGD
}

// linearModel is p = x·wᵀ + b with the mean squared error, on batches of
// rows examples of features features.
func linearModel(t *testing.T, dt tensor.Dtype, rows, features int) *model {
	t.Helper()
	g, err := graph.New(dt, trainSeed)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, features)
	y, _ := g.Input("y", rows, 1)
	w, err := g.Param("w", graph.Uniform(-1, 1), 1, features)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := g.Param("b", graph.Uniform(-1, 1), 1)
	p, err := fused.Linear(x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := fused.MSELoss(p, y)
	if err != nil {
		t.Fatal(err)
	}
	return compile(t, g, x, y, loss, &optim.SGD{LearningRate: 0.05})
}

// mlpModel is a GELU MLP with cross-entropy, trained with momentum.
func mlpModel(t *testing.T, rows, features, hidden, classes int) *model {
	t.Helper()
	g, err := graph.New(tensor.Float32, trainSeed)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, features)
	y, _ := g.Input("y", rows)
	w1, _ := g.Param("fc1.weight", graph.XavierUniform(1), hidden, features)
	b1, _ := g.Param("fc1.bias", graph.Uniform(-0.1, 0.1), hidden)
	w2, _ := g.Param("fc2.weight", graph.XavierUniform(1), classes, hidden)
	b2, _ := g.Param("fc2.bias", graph.Zeros(), classes)
	h, err := fused.Linear(x, w1, b1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := activation.GELU.Apply(h)
	if err != nil {
		t.Fatal(err)
	}
	o, err := fused.Linear(a, w2, b2)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := fused.CrossEntropy(o, y)
	if err != nil {
		t.Fatal(err)
	}
	return compile(t, g, x, y, loss, &optim.SGD{LearningRate: 0.1, Momentum: 0.9})
}

func compile(t *testing.T, g *graph.Graph, x, y, loss *G.Node, opt *optim.SGD) *model {
	t.Helper()
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &model{g: g, m: m, x: x, y: y, opt: opt}
}

// dataset is a seeded training set and the seeded order in which one
// process visits it, global batch after global batch.
type dataset struct {
	x, y  [][]float64
	order []int
}

func newDataset(examples, features int, classes int) *dataset {
	r := rng.New(trainSeed, "data")
	d := &dataset{order: rng.New(trainSeed, "order").Perm(examples)}
	for range examples {
		row := make([]float64, features)
		s := 0.0
		for k := range row {
			// Multiples of 1/64 in [−2, 2]: exact in float32, so both
			// dtypes and the bound see the same numbers.
			row[k] = math.Round(r.Uniform(-2, 2)*64) / 64
			s += row[k] * float64(k+1) / float64(features)
		}
		d.x = append(d.x, row)
		if classes > 0 {
			d.y = append(d.y, []float64{float64(int(math.Abs(s)*2) % classes)})
		} else {
			d.y = append(d.y, []float64{math.Round((s+0.1*r.Normal())*64) / 64})
		}
	}
	return d
}

// batch is a batch's inputs and targets.
type batch struct{ x, y *tensor.Dense }

// rows returns global batch step's rows [lo, hi) as tensors of dtype dt.
func (d *dataset) rows(dt tensor.Dtype, step, global, lo, hi int, ylabels bool) batch {
	var xs, ys []float64
	for _, i := range d.order[step*global+lo : step*global+hi] {
		xs = append(xs, d.x[i]...)
		ys = append(ys, d.y[i]...)
	}
	yshape := []int{hi - lo, 1}
	if ylabels {
		yshape = []int{hi - lo}
	}
	return batch{fromFloat64s(dt, xs, hi-lo, len(d.x[0])), fromFloat64s(dt, ys, yshape...)}
}

func fromFloat64s(dt tensor.Dtype, v []float64, shape ...int) *tensor.Dense {
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), v...)))
}

// step runs forward and backward on a batch and returns the gradients
// (the machine's own tensors).
func (md *model) step(t *testing.T, b batch) []*tensor.Dense {
	t.Helper()
	if err := md.m.Set(md.x, b.x); err != nil {
		t.Fatal(err)
	}
	if err := md.m.Set(md.y, b.y); err != nil {
		t.Fatal(err)
	}
	if err := md.m.Run(); err != nil {
		t.Fatal(err)
	}
	gs, err := md.m.Grads()
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func (md *model) update(t *testing.T, grads []*tensor.Dense) {
	if err := md.opt.Step(md.g.ParamTensors(), grads); err != nil {
		panic(fmt.Sprintf("optimizer step: %v", err)) // a test's bug, not a finding
	}
}

func float64s(t *tensor.Dense) []float64 {
	if t.Dtype() == tensor.Float32 {
		out := make([]float64, t.Shape().TotalSize())
		for i, v := range t.Float32s() {
			out[i] = float64(v)
		}
		return out
	}
	return append([]float64(nil), t.Float64s()...)
}

// accumulate returns Σ_r g_r·share_r in rank order, each product and the
// share rounded to the gradients' type: what the deterministic Reducer
// computes, written out for one process.
func accumulate(grads [][]*tensor.Dense, shares []float64) []*tensor.Dense {
	out := make([]*tensor.Dense, len(grads[0]))
	for i := range out {
		g0 := grads[0][i]
		if g0.Dtype() == tensor.Float32 {
			var all [][]float32
			for r := range grads {
				all = append(all, grads[r][i].Float32s())
			}
			sum, _ := rankOrderMean(all, shares)
			out[i] = tensor.New(tensor.WithShape(g0.Shape()...), tensor.WithBacking(sum))
		} else {
			var all [][]float64
			for r := range grads {
				all = append(all, grads[r][i].Float64s())
			}
			sum, _ := rankOrderMean(all, shares)
			out[i] = tensor.New(tensor.WithShape(g0.Shape()...), tensor.WithBacking(sum))
		}
	}
	return out
}

// sameBits fails unless two models' parameters are bit-identical.
func sameBits(a, b *model) error {
	pa, pb := a.g.ParamTensors(), b.g.ParamTensors()
	for i := range pa {
		va, vb := float64s(pa[i].Value), float64s(pb[i].Value)
		for j := range va {
			if math.Float64bits(va[j]) != math.Float64bits(vb[j]) {
				return fmt.Errorf("%s[%d] is %v, want %v", pa[i].Name, j, va[j], vb[j])
			}
		}
	}
	return nil
}

func linearParams(md *model) []float64 {
	ps := md.g.ParamTensors()
	return append(float64s(ps[0].Value), float64s(ps[1].Value)[0])
}

func flatGrads(grads []*tensor.Dense) []float64 {
	return append(float64s(grads[0]), float64s(grads[1])...)
}

// compareStep checks a data-parallel step's gradients gd against the
// single process's gs, taken at parameters at most e apart, within
// roundoff's bound, and after both updates the parameters; it returns the
// parameters' new distance bound and records in ratio the largest
// |Δĝ|/bound seen, to show how tight the bound is.
func compareStep(lb *roundoff.Linear, step int, single, dist *model, gs, gd []*tensor.Dense, e []float64, ratio *float64) ([]float64, error) {
	dg := lb.GradBound(linearParams(single), linearParams(dist), e)
	fs, fd := flatGrads(gs), flatGrads(gd)
	for k := range fs {
		d := math.Abs(fs[k] - fd[k])
		*ratio = max(*ratio, d/dg[k])
		if d > dg[k] {
			return nil, fmt.Errorf("step %d: gradient %d is %v in one process, %v data-parallel: differ by %.3g, bound %.3g", step, k, fs[k], fd[k], d, dg[k])
		}
	}
	single.update(nil, gs)
	dist.update(nil, gd)
	ps, pd := linearParams(single), linearParams(dist)
	bound := lb.ParamBound(e, dg, ps, pd, fs, fd)
	for k := range bound {
		if d := math.Abs(ps[k] - pd[k]); d > bound[k] {
			return nil, fmt.Errorf("after step %d: parameter %d is %v in one process, %v data-parallel: differ by %.3g, bound %.3g", step, k, ps[k], pd[k], d, bound[k])
		}
	}
	return bound, nil
}

// TestRankTrainLinear trains a linear model for a few steps on each rank's
// shard of a global batch of 16 (8+8 on 2 ranks, 6+5+5 on 3) and compares
// with one process on all 16 rows, within the bound derived in gradError,
// and, in the deterministic mode, bit for bit with one process that sums
// the shards' gradients in rank order. The same comparison of a run that
// skips the all-reduce must fail.
func TestRankTrainLinear(t *testing.T) {
	c := inJob(t)
	n, me := c.Size(), c.Rank()
	const global, features = 16, 5
	data := newDataset(trainSteps*global, features, 0)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, mode := range []string{"all-reduce", "deterministic", "no reduction (mutation)"} {
			t.Run(fmt.Sprintf("%v/%s", dt, mode), func(t *testing.T) {
				unit := 0x1p-53
				if dt == tensor.Float32 {
					unit = 0x1p-24
				}
				single := linearModel(t, dt, global, features)
				shards := make([]*model, n) // one process accumulating every shard
				shares := make([]float64, n)
				for r := range n {
					lo, hi, _ := Shard(global, r, n)
					shards[r], shares[r] = linearModel(t, dt, hi-lo, features), float64(hi-lo)/global
				}
				lo, hi, _ := Shard(global, me, n)
				dist := linearModel(t, dt, hi-lo, features)
				red, err := NewReducer(c, dist.g.ParamTensors(), Options{Deterministic: mode == "deterministic"})
				if err != nil {
					t.Fatal(err)
				}
				defer red.Close()
				if err := red.SetShare(hi-lo, global); err != nil {
					t.Fatal(err)
				}
				if err := sameBits(single, dist); err != nil {
					t.Fatalf("initial parameters differ: %v", err)
				}
				e := make([]float64, features+1)
				var failure error
				ratio := 0.0
				for step := range trainSteps {
					gs := single.step(t, data.rows(dt, step, global, 0, global, false))

					var grads [][]*tensor.Dense
					for r := range n {
						rlo, rhi, _ := Shard(global, r, n)
						grads = append(grads, shards[r].step(t, data.rows(dt, step, global, rlo, rhi, false)))
					}
					acc := accumulate(grads, shares)

					gd := dist.step(t, data.rows(dt, step, global, lo, hi, false))
					if mode != "no reduction (mutation)" {
						if err := red.Wait(context.Background(), gd); err != nil {
							t.Fatal(err)
						}
					}
					lb := &roundoff.Linear{Unit: unit, N: global, D: features, Terms: n, LR: single.opt.LearningRate}
					for i := range global {
						lb.Xs = append(lb.Xs, data.x[data.order[step*global+i]])
						lb.Ys = append(lb.Ys, data.y[data.order[step*global+i]][0])
					}
					for _, s := range shards {
						s.update(t, acc)
					}
					e, err = compareStep(lb, step, single, dist, gs, gd, e, &ratio)
					if err != nil {
						failure = err
						break
					}
					if mode == "deterministic" {
						if err := sameBits(dist, shards[0]); err != nil {
							t.Fatalf("step %d: deterministic data-parallel run differs from one process summing the shards in rank order: %v", step, err)
						}
					}
				}
				if mode == "no reduction (mutation)" {
					if failure == nil {
						t.Fatal("training without the all-reduce passed the comparison with one process: the test cannot detect a missing reduction")
					}
					t.Logf("without the all-reduce, as expected: %v", failure)
					return
				}
				if failure != nil {
					t.Fatal(failure)
				}
				t.Logf("largest gradient difference from one process: %.2g of the bound", ratio)
				if err := CheckParams(c, dist.g.ParamTensors()); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestRankTrainMLP trains a GELU MLP with momentum, in the deterministic
// mode, on each rank's shard of a global batch of 4 per rank and checks it
// bit for bit against one process that accumulates the shards' gradients
// in rank order; skipping the all-reduce must break the equality.
func TestRankTrainMLP(t *testing.T) {
	c := inJob(t)
	n, me := c.Size(), c.Rank()
	const local, features, hidden, classes = 4, 6, 16, 3
	global := n * local
	data := newDataset(trainSteps*global, features, classes)
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip all-reduce=%v", skip), func(t *testing.T) {
			ref := mlpModel(t, local, features, hidden, classes)
			dist := mlpModel(t, local, features, hidden, classes)
			red, err := NewReducer(c, dist.g.ParamTensors(), Options{Deterministic: true, BucketBytes: 256})
			if err != nil {
				t.Fatal(err)
			}
			defer red.Close()
			shares := make([]float64, n)
			for r := range shares {
				shares[r] = 1 / float64(n)
			}
			lo, hi, _ := Shard(global, me, n)
			for step := range trainSteps {
				var grads [][]*tensor.Dense
				for r := range n {
					rlo, rhi, _ := Shard(global, r, n)
					gs := ref.step(t, data.rows(tensor.Float32, step, global, rlo, rhi, true))
					var cp []*tensor.Dense
					for _, g := range gs {
						cp = append(cp, g.Clone().(*tensor.Dense))
					}
					grads = append(grads, cp)
				}
				ref.update(t, accumulate(grads, shares))

				gd := dist.step(t, data.rows(tensor.Float32, step, global, lo, hi, true))
				if !skip {
					// Hand the gradients over last to first, as a backward
					// pass produces them.
					for i := len(gd) - 1; i >= 1; i-- {
						if err := red.Ready(i, gd[i]); err != nil {
							t.Fatal(err)
						}
					}
					if err := red.Wait(context.Background(), gd); err != nil {
						t.Fatal(err)
					}
				}
				dist.update(t, gd)
				err := sameBits(dist, ref)
				if skip {
					if err == nil {
						t.Fatalf("step %d: without the all-reduce the parameters still equal one process's", step)
					}
					t.Logf("without the all-reduce, as expected, step %d differs: %v", step, err)
					return
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
			}
		})
	}
}
