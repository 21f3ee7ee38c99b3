package train_test

// Data-parallel step times through the Trainer, for train/dist/SCALING.md:
// the GPT step's model (nn.GPT L4-d256-h8-T128, global batch 16) and the
// GELU paper's MNIST MLP (784 → 8 × 128 → 10, global batch 128), in one
// process, or as the ranks of an MPI job:
//
//	go test -c -o train.test ./train
//	GOMAXPROCS=2 ./train.test -test.run '^$' -test.bench BenchmarkParallelStep -test.benchtime 30x
//	mpirun --allow-run-as-root -np 2 -x GELU_DIST_WORKER=1 ./train.test -test.run '^$' -test.bench BenchmarkParallelStep -test.benchtime 30x
//
// Every rank must run the same steps: use a fixed -test.benchtime Nx.
// The metrics are the median, fastest and mean wall time per step
// (evaluation none), from the third step on, and in a job the median and
// fastest time per step spent inside MPI calls (the reduction, the
// exchange of losses, and the wait for the slowest rank); on a shared
// machine the median and the fastest say more than the mean.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/dist"
	"github.com/geluproject/gelu/train/internal/mpitest"
	"gorgonia.org/tensor"
)

// benchWorkload builds a model of rows rows (this rank's share) and data
// in batches of batch rows.
type benchWorkload struct {
	name   string
	global int
	build  func(b *testing.B, rows, batch int) (train.Model, train.Data)
}

var benchWorkloads = []benchWorkload{
	{"gpt-L4-d256-h8-T128-B16", 16, func(b *testing.B, rows, batch int) (train.Model, train.Data) {
		const vocab, block = 91, 128
		g, _ := graph.New(tensor.Float32, 1)
		gpt, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: block, VocabSize: vocab, Layers: 4, Heads: 8, Dim: 256})
		if err != nil {
			b.Fatal(err)
		}
		x, _ := g.Input("x", rows, block)
		y, _ := g.Input("y", rows, block)
		logits, loss, err := gpt.Loss(x, y)
		if err != nil {
			b.Fatal(err)
		}
		r := rng.New(1, "benchmark text")
		ids := make([]int, 200000)
		for i := range ids {
			ids[i] = r.IntN(vocab)
		}
		data, err := datasets.NewTokenStream(ids, datasets.TokenStreamConfig{BatchSize: batch, BlockSize: block, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}, data
	}},
	{"mlp-784-8x128-10-B128", 128, func(b *testing.B, rows, batch int) (train.Model, train.Data) {
		g, _ := graph.New(tensor.Float32, 1)
		mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 784, Hidden: slices.Repeat([]int{128}, 8), Out: 10, Activation: activation.GELU})
		if err != nil {
			b.Fatal(err)
		}
		x, _ := g.Input("x", rows, 784)
		y, _ := g.Input("y", rows)
		out, _ := mlp.Forward(x)
		loss, err := nn.CrossEntropyLoss(out, y)
		if err != nil {
			b.Fatal(err)
		}
		r := rng.New(1, "benchmark mnist")
		d := &datasets.Dataset{Name: "synthetic MNIST", Features: 784, Classes: 10}
		for range 128 * 40 {
			for range 784 {
				d.X = append(d.X, float32(r.Uniform(0, 1)))
			}
			d.Labels = append(d.Labels, r.IntN(10))
		}
		l, err := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: batch, Shuffle: true, Seed: 1, DropLast: true})
		if err != nil {
			b.Fatal(err)
		}
		return train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss}, l
	}},
}

// benchModes are the reductions timed in a job; in one process, "alone".
var benchModes = []struct {
	name string
	opts dist.Options
	skip bool // no reduction: the ranks' compute alone, as contended as in the others
}{
	{name: "none", skip: true},
	{name: "allreduce", opts: dist.Options{}},
	{name: "allreduce-1MiB", opts: dist.Options{BucketBytes: 1 << 20}},
	{name: "overlap-1MiB", opts: dist.Options{BucketBytes: 1 << 20, Overlap: true}},
	{name: "deterministic", opts: dist.Options{Deterministic: true}},
}

func BenchmarkParallelStep(b *testing.B) {
	var c dist.Comm
	if mpitest.InJob() {
		c = mpitest.World(b)
	}
	for _, w := range benchWorkloads {
		if c == nil {
			// The global batch, and half of it: the per-row and the
			// per-step (optimizer) parts of a step's compute.
			b.Run(w.name+"/alone", func(b *testing.B) { benchSteps(b, w, nil, dist.Options{}, w.global) })
			b.Run(w.name+"/alone-half-batch", func(b *testing.B) { benchSteps(b, w, nil, dist.Options{}, w.global/2) })
			continue
		}
		for _, m := range benchModes {
			b.Run(fmt.Sprintf("%s/np%d-%s", w.name, c.Size(), m.name), func(b *testing.B) {
				var cc dist.Comm = timedComm{c, new(time.Duration)}
				if m.skip {
					cc = skipReduction{cc}
				}
				benchSteps(b, w, cc, m.opts, w.global)
			})
		}
	}
}

// benchSteps trains 2 + b.N steps on batches of global rows and reports
// the step times from the third on.
func benchSteps(b *testing.B, w benchWorkload, c dist.Comm, opts dist.Options, global int) {
	rows := global
	if c != nil {
		lo, hi, _ := dist.Shard(global, c.Rank(), c.Size())
		rows = hi - lo
	}
	model, data := w.build(b, rows, global)
	const warm = 2
	var times, inMPI []time.Duration
	var spent *time.Duration
	switch tc := c.(type) {
	case timedComm:
		spent = tc.spent
	case skipReduction:
		spent = tc.Comm.(timedComm).spent
	}
	last := time.Now()
	check := 0 // the default
	if _, ok := c.(skipReduction); ok {
		check = 1 << 30 // the ranks drift apart without a reduction
	}
	cfg := train.Config{MaxSteps: warm + b.N, Quiet: true, Comm: c, Reduce: opts, ParamCheckEvery: check, OnStep: func(_ *train.Trainer, s train.StepInfo) error {
		now := time.Now()
		if s.Step > warm {
			times = append(times, now.Sub(last))
			if spent != nil {
				inMPI = append(inMPI, *spent)
			}
		}
		if spent != nil {
			*spent = 0
		}
		last = now
		return nil
	}}
	t, err := train.New(model, optim.NewAdamW(1e-3), data, nil, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	last = time.Now()
	if _, err := t.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	slices.Sort(times)
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(ms(times[len(times)/2]), "median-ms/step")
	b.ReportMetric(ms(times[0]), "min-ms/step")
	b.ReportMetric(ms(sum)/float64(len(times)), "mean-ms/step")
	if len(inMPI) > 0 {
		slices.Sort(inMPI)
		b.ReportMetric(ms(inMPI[len(inMPI)/2]), "median-mpi-ms/step")
		b.ReportMetric(ms(inMPI[0]), "min-mpi-ms/step")
	}
}

// timedComm adds the time spent in its collectives, and its copies', to
// *spent.
type timedComm struct {
	dist.Comm
	spent *time.Duration
}

func (c timedComm) time(f func() error) error {
	t0 := time.Now()
	err := f()
	*c.spent += time.Since(t0)
	return err
}

func (c timedComm) Dup() (dist.Comm, error) {
	d, err := c.Comm.Dup()
	return timedComm{d, c.spent}, err
}
func (c timedComm) Allreduce(buf any, op dist.Op) error {
	return c.time(func() error { return c.Comm.Allreduce(buf, op) })
}
func (c timedComm) Allgather(s, r any) error {
	return c.time(func() error { return c.Comm.Allgather(s, r) })
}
func (c timedComm) Alltoall(s, r any) error {
	return c.time(func() error { return c.Comm.Alltoall(s, r) })
}
func (c timedComm) started(req dist.Request, err error) (dist.Request, error) {
	return timedRequest{req, c}, err
}
func (c timedComm) Iallreduce(buf any, op dist.Op) (dist.Request, error) {
	var req dist.Request
	err := c.time(func() (err error) { req, err = c.Comm.Iallreduce(buf, op); return })
	return c.started(req, err)
}
func (c timedComm) Iallgather(s, r any) (dist.Request, error) {
	var req dist.Request
	err := c.time(func() (err error) { req, err = c.Comm.Iallgather(s, r); return })
	return c.started(req, err)
}
func (c timedComm) Ialltoall(s, r any) (dist.Request, error) {
	var req dist.Request
	err := c.time(func() (err error) { req, err = c.Comm.Ialltoall(s, r); return })
	return c.started(req, err)
}

type timedRequest struct {
	dist.Request
	c timedComm
}

func (r timedRequest) Test() (ok bool, err error) {
	r.c.time(func() error { ok, err = r.Request.Test(); return nil })
	return
}
func (r timedRequest) Wait(ctx context.Context) error {
	return r.c.time(func() error { return r.Request.Wait(ctx) })
}
