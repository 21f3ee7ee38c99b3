package train_test

// Data-parallel training through the Trainer (Config.Comm), as the 2 and
// 3 ranks of mpirun jobs that TestTrainMPI starts (3 ranks: shares of 6,
// 5 and 5 rows of a global batch of 16):
//
//   - N ranks with shares of each global batch train to the parameters of
//     one process on the whole batch, within a rounding bound derived in
//     package roundoff, with and without gradient accumulation;
//   - in the deterministic mode, bit for bit to one process that
//     accumulates the ranks' shares as micro-batches (GradAccum N), the
//     dropout masks, losses and norms included;
//   - both fail when the all-reduce is skipped (a communicator whose
//     reductions do nothing);
//   - the ranks stop together, with one error, when they disagree at
//     start, when their parameters drift apart, when one fails or sees a
//     NaN, and when one is cancelled.
//
// TestTrainKilledRankResumes kills a rank in the middle of a run and
// resumes it from the last checkpoint: the files equal an uninterrupted
// run's, byte for byte.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/dist"
	"github.com/geluproject/gelu/train/internal/mpitest"
	"github.com/geluproject/gelu/train/internal/roundoff"
	"gorgonia.org/tensor"
)

// dirEnv names a folder the parent test made for a job's ranks, the same
// path on every rank.
const dirEnv = "GELU_TRAIN_TEST_DIR"

func TestTrainMPI(t *testing.T) {
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			j := mpitest.Run(t, np, "^TestRank", 10*time.Minute, dirEnv+"="+t.TempDir())
			mpitest.RequirePassed(t, j, np)
		})
	}
}

// jobDir is a folder of the job's shared test folder for one test, the
// same on every rank.
func jobDir(t *testing.T, c dist.Comm, name string) string {
	t.Helper()
	root := os.Getenv(dirEnv)
	if root == "" {
		t.Fatalf("%s is not set", dirEnv)
	}
	return filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_")+"_"+name)
}

const (
	linFeatures = 5
	linExamples = 96
)

// linearData is a regression set whose values are multiples of 1/64 in
// [−2, 2], exact in float32, so both dtypes and the bound see the same
// numbers.
func linearData() *datasets.Dataset {
	r := rng.New(21, "linear")
	d := &datasets.Dataset{Name: "linear", Features: linFeatures, TargetDim: 1}
	for range linExamples {
		s := 0.0
		for k := range linFeatures {
			x := math.Round(r.Uniform(-2, 2)*64) / 64
			d.X = append(d.X, float32(x))
			s += x * float64(k+1) / linFeatures
		}
		d.Targets = append(d.Targets, float32(math.Round((s+0.1*r.Normal())*64)/64))
	}
	return d
}

// linearModel is p = x·wᵀ + b with the mean squared error on batches of
// rows rows: the model whose rounding package roundoff bounds.
func linearModel(t *testing.T, dt tensor.Dtype, rows int) train.Model {
	t.Helper()
	g, err := graph.New(dt, 11)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, linFeatures)
	y, _ := g.Input("y", rows, 1)
	w, _ := g.Param("w", graph.Uniform(-1, 1), 1, linFeatures)
	b, _ := g.Param("b", graph.Uniform(-1, 1), 1)
	p, err := fused.Linear(x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := fused.MSELoss(p, y)
	if err != nil {
		t.Fatal(err)
	}
	return train.Model{Graph: g, Input: x, Target: y, Output: p, Loss: loss, Task: train.Regression}
}

func loader(t *testing.T, d *datasets.Dataset, rows int, dt tensor.Dtype, shuffle bool) *datasets.Loader {
	t.Helper()
	l, err := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: rows, Shuffle: shuffle, Seed: 4, DropLast: shuffle, Dtype: dt})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// shareRows is this rank's rows of a global batch.
func shareRows(c dist.Comm, global int) int {
	lo, hi, _ := dist.Shard(global, c.Rank(), c.Size())
	return hi - lo
}

// snapshot is the parameters' values as float64s, in order.
func snapshot(m train.Model) [][]float64 {
	var out [][]float64
	for _, p := range m.Graph.ParamTensors() {
		out = append(out, graph.Float64s(p.Value))
	}
	return out
}

func flat(ps [][]float64) []float64 { return slices.Concat(ps...) }

// trace is a run's parameters before every step and after the last, and
// its step records.
type trace struct {
	params [][][]float64
	steps  []train.StepInfo
	res    train.Result
	err    error
}

// runTrace trains m with cfg and records the trace.
func runTrace(t *testing.T, m train.Model, opt optim.Optimizer, trainData, valData train.Data, cfg train.Config) *trace {
	t.Helper()
	tr := &trace{params: [][][]float64{snapshot(m)}}
	cfg.Quiet = true
	onStep := cfg.OnStep
	cfg.OnStep = func(x *train.Trainer, s train.StepInfo) error {
		tr.params = append(tr.params, snapshot(m))
		tr.steps = append(tr.steps, s)
		if onStep != nil {
			return onStep(x, s)
		}
		return nil
	}
	x, err := train.New(m, opt, trainData, valData, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr.res, tr.err = x.Run(context.Background())
	return tr
}

// skipReduction is the mutation: a communicator whose copies (the
// Reducer's) reduce nothing, each rank keeping its own scaled gradients.
type skipReduction struct{ dist.Comm }

func (s skipReduction) Dup() (dist.Comm, error) {
	d, err := s.Comm.Dup()
	return noReduce{d}, err
}

type noReduce struct{ dist.Comm }

type done struct{}

func (done) Test() (bool, error)              { return true, nil }
func (done) Wait(context.Context) error       { return nil }
func (noReduce) Allreduce(any, dist.Op) error { return nil }
func (noReduce) Iallreduce(any, dist.Op) (dist.Request, error) {
	return done{}, nil
}
func (noReduce) Alltoall(any, any) error                   { return nil }
func (noReduce) Ialltoall(any, any) (dist.Request, error)  { return done{}, nil }
func (noReduce) Allgather(any, any) error                  { return nil }
func (noReduce) Iallgather(any, any) (dist.Request, error) { return done{}, nil }

// TestRankTrainerEqualsOneProcess trains the linear model with SGD for two
// epochs of 6 global batches of 16 rows (12 steps; 6 with gradient
// accumulation over 2 batches) on every rank's share and in one process
// on whole batches, and checks after every step that the parameters are
// within the bound that roundoff.Linear derives, step after step, from
// the parameters' distance before it. The same check of a run without
// the all-reduce must fail.
func TestRankTrainerEqualsOneProcess(t *testing.T) {
	c := mpitest.World(t)
	const global, lr = 16, 0.05
	d := linearData()
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, accum := range []int{1, 2} {
			for _, mutant := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/accum=%d/skip-reduction=%v", dt, accum, mutant), func(t *testing.T) {
					unit := 0x1p-53
					if dt == tensor.Float32 {
						unit = 0x1p-24
					}
					cfg := train.Config{Epochs: 2, GradAccum: accum, EvalEvery: 4}
					one := runTrace(t, linearModel(t, dt, global), &optim.SGD{LearningRate: lr},
						loader(t, d, global, dt, true), loader(t, d, 32, dt, false), cfg)
					cfg.Comm = c
					if mutant {
						cfg.Comm = skipReduction{c}
					}
					par := runTrace(t, linearModel(t, dt, shareRows(c, global)), &optim.SGD{LearningRate: lr},
						loader(t, d, global, dt, true), loader(t, d, 32, dt, false), cfg)
					if one.err != nil || par.err != nil {
						t.Fatalf("one process: %v; data-parallel: %v", one.err, par.err)
					}
					if len(par.params) != len(one.params) {
						t.Fatalf("%d steps on %d ranks, %d in one process", len(par.steps), c.Size(), len(one.steps))
					}
					rows := loader(t, d, global, dt, true)
					e := make([]float64, linFeatures+1)
					ratio := 0.0
					var failure error
					for s, info := range one.steps {
						lb := &roundoff.Linear{Unit: unit, N: global * accum, D: linFeatures, Terms: c.Size() + accum, LR: lr}
						for j := range accum {
							b, _ := rows.Batch(info.Epoch, info.Batch+j)
							xs, ys := graph.Float64s(b.X), graph.Float64s(b.Y)
							for i := range global {
								lb.Xs = append(lb.Xs, xs[i*linFeatures:(i+1)*linFeatures])
								lb.Ys = append(lb.Ys, ys[i])
							}
						}
						p1, p2 := flat(one.params[s]), flat(par.params[s])
						q1, q2 := flat(one.params[s+1]), flat(par.params[s+1])
						dg := lb.GradBound(p1, p2, e)
						// The gradients used, from the update they made:
						// |lr·ĝ| ≤ (|p − p'| + 2u·|p'|)·(1 + 2u).
						g1, g2 := make([]float64, len(e)), make([]float64, len(e))
						for k := range e {
							g1[k] = (math.Abs(p1[k]-q1[k]) + 2*unit*math.Abs(q1[k])) * (1 + 2*unit) / lr
							g2[k] = (math.Abs(p2[k]-q2[k]) + 2*unit*math.Abs(q2[k])) * (1 + 2*unit) / lr
						}
						e = lb.ParamBound(e, dg, q1, q2, g1, g2)
						for k := range e {
							diff := math.Abs(q1[k] - q2[k])
							if e[k] > 0 {
								ratio = max(ratio, diff/e[k])
							}
							if diff > e[k] && failure == nil {
								failure = fmt.Errorf("after step %d: parameter %d is %v in one process, %v on %d ranks: differ by %.3g, bound %.3g",
									info.Step, k, q1[k], q2[k], c.Size(), diff, e[k])
							}
						}
					}
					if mutant {
						if failure == nil {
							t.Fatal("without the all-reduce the parameters stayed within the bound of one process's: the test cannot see a missing reduction")
						}
						t.Logf("without the all-reduce, as expected: %v", failure)
						return
					}
					if failure != nil {
						t.Fatal(failure)
					}
					if len(par.steps) != len(one.steps) || len(one.steps) != 12/accum {
						t.Fatalf("%d steps on %d ranks, %d in one process, want %d", len(par.steps), c.Size(), len(one.steps), 12/accum)
					}
					// Evaluation is sharded and reduced: every rank has
					// the same results.
					if err := dist.CheckSame(c, "the evaluations", map[string]string{"evals": fmt.Sprint(par.res.Evals)}); err != nil {
						t.Fatal(err)
					}
					t.Logf("largest parameter difference: %.2g of the bound", ratio)
				})
			}
		}
	}
}

// mlpData is a 3-class problem on 8 features: 288 examples.
func mlpData() *datasets.Dataset {
	r := rng.New(8, "mlp")
	d := &datasets.Dataset{Name: "mlp", Features: 8, Classes: 3}
	for range 288 {
		s := 0.0
		for k := range 8 {
			x := r.Normal()
			d.X = append(d.X, float32(x))
			s += x * float64(k%3-1)
		}
		d.Labels = append(d.Labels, int(math.Abs(s)*1.5)%3)
	}
	return d
}

// mlpModel is a GELU MLP with dropout and cross-entropy on batches of
// rows rows.
func mlpModel(t *testing.T, rows int) train.Model {
	t.Helper()
	g, err := graph.New(tensor.Float32, 5)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 8, Hidden: []int{16, 16}, Out: 3, Dropout: 0.2, Activation: activation.GELU})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, 8)
	y, _ := g.Input("y", rows)
	out, err := mlp.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := fused.CrossEntropy(out, y)
	if err != nil {
		t.Fatal(err)
	}
	return train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss}
}

// TestRankTrainerDeterministic trains the dropout MLP with AdamW and
// clipping on N ranks of 4 rows each in the deterministic mode, and in one
// process on batches of 4 accumulated over N (the ranks' shares as
// micro-batches, in rank order): every step's parameters, loss, norm and
// learning rate are the same bits. Validation losses, sums of the same
// per-target losses in another order, agree within 2·γ_n of their size.
// Without the all-reduce the parameters differ after the first step.
func TestRankTrainerDeterministic(t *testing.T) {
	c := mpitest.World(t)
	const local = 4
	n := c.Size()
	d := mlpData()
	for _, mutant := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip-reduction=%v", mutant), func(t *testing.T) {
			opt := func() optim.Optimizer { return optim.NewAdamW(3e-3) }
			cfg := train.Config{Epochs: 2, ClipNorm: 0.5, EvalEvery: 5, GradAccum: n}
			one := runTrace(t, mlpModel(t, local), opt(), loader(t, d, local, tensor.Float32, true), loader(t, d, 50, tensor.Float32, false), cfg)
			cfg.GradAccum, cfg.Comm, cfg.Reduce = 1, c, dist.Options{Deterministic: true, BucketBytes: 512}
			if mutant {
				cfg.Comm = skipReduction{c}
			}
			par := runTrace(t, mlpModel(t, local), opt(), loader(t, d, n*local, tensor.Float32, true), loader(t, d, 50, tensor.Float32, false), cfg)
			if one.err != nil || par.err != nil {
				t.Fatalf("one process: %v; data-parallel: %v", one.err, par.err)
			}
			if len(one.steps) != len(par.steps) || len(one.steps) < 10 {
				t.Fatalf("%d steps in one process, %d on %d ranks", len(one.steps), len(par.steps), n)
			}
			var failure error
			for s := range one.steps {
				a, b := one.steps[s], par.steps[s]
				if a.Loss != b.Loss || a.GradNorm != b.GradNorm || a.LR != b.LR {
					failure = fmt.Errorf("step %d: loss %v, norm %v, lr %v in one process; %v, %v, %v on %d ranks", a.Step, a.Loss, a.GradNorm, a.LR, b.Loss, b.GradNorm, b.LR, n)
					break
				}
				if p, q := flat(one.params[s+1]), flat(par.params[s+1]); !slices.Equal(p, q) {
					k := 0
					for k = range p {
						if p[k] != q[k] {
							break
						}
					}
					failure = fmt.Errorf("after step %d: parameter element %d is %v in one process, %v on %d ranks", a.Step, k, p[k], q[k], n)
					break
				}
			}
			if mutant {
				if failure == nil {
					t.Fatal("without the all-reduce the run equals one process's bit for bit: the test cannot see a missing reduction")
				}
				t.Logf("without the all-reduce, as expected: %v", failure)
				return
			}
			if failure != nil {
				t.Fatal(failure)
			}
			if len(one.res.Evals) != len(par.res.Evals) {
				t.Fatalf("%d evaluations in one process, %d on %d ranks", len(one.res.Evals), len(par.res.Evals), n)
			}
			targets := float64(d.Len())
			gamma := (targets + float64(n)) * 0x1p-53 / (1 - (targets+float64(n))*0x1p-53)
			for i, a := range one.res.Evals {
				b := par.res.Evals[i]
				if a.Step != b.Step || a.ValAccuracy != b.ValAccuracy || math.Abs(a.ValLoss-b.ValLoss) > 2*gamma*a.ValLoss || a.TrainLoss != b.TrainLoss {
					t.Errorf("evaluation %d: %+v in one process, %+v on %d ranks", i, a, b, n)
				}
			}
		})
	}
}

// rankData makes the last rank's batch at of epoch 0 fail, or its
// features huge (overflowing a squared error), to play a rank that fails
// alone.
type rankData struct {
	train.Data
	c            dist.Comm
	at           int
	fail, nonFin bool
	x            *tensor.Dense
}

func (r *rankData) Batch(epoch, i int) (datasets.Batch, error) {
	b, err := r.Data.Batch(epoch, i)
	if err != nil || r.c.Rank() != r.c.Size()-1 || epoch != 0 || i != r.at {
		return b, err
	}
	if r.fail {
		return b, errors.New("the data file is unreadable")
	}
	if r.x == nil {
		r.x = b.X.Clone().(*tensor.Dense)
	}
	for j := range r.x.Float32s() {
		r.x.Float32s()[j] = 3e38 // finite, but any sum of two overflows
	}
	out := b
	out.X = r.x
	out.Fields = slices.Clone(b.Fields)
	out.Fields[0].Values = r.x
	return out, nil
}

// TestRankTrainerStopsTogether: one rank failing alone (its data, a
// non-finite loss, its context cancelled, a parameter changed behind the
// trainer's back) ends the run on every rank at the same step, with the
// same error, instead of leaving the others waiting.
func TestRankTrainerStopsTogether(t *testing.T) {
	c := mpitest.World(t)
	last := c.Size() - 1
	d := mlpData()
	model := func() train.Model { return mlpModel(t, shareRows(c, 12)) }
	data := func() train.Data { return loader(t, d, 12, tensor.Float32, true) }
	run := func(m train.Model, trainData train.Data, ctx context.Context, cfg train.Config) (train.Result, error) {
		t.Helper()
		cfg.Comm, cfg.Quiet, cfg.Epochs = c, true, 1
		x, err := train.New(m, optim.NewAdamW(1e-3), trainData, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return x.Run(ctx)
	}
	// sameOnAll fails unless every rank got this error text.
	sameOnAll := func(t *testing.T, err error) {
		t.Helper()
		if err := dist.CheckSame(c, "the error", map[string]string{"error": fmt.Sprint(err)}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("data", func(t *testing.T) {
		res, err := run(model(), &rankData{Data: data(), c: c, at: 3, fail: true}, context.Background(), train.Config{})
		want := fmt.Sprintf("train: step 4 (epoch 0, batch 3): rank %d: the data file is unreadable", last)
		if err == nil || !strings.Contains(err.Error(), want) || res.Steps != 3 {
			t.Fatalf("after %d steps: %v; want 3 steps and %q", res.Steps, err, want)
		}
		sameOnAll(t, err)
	})
	t.Run("non-finite", func(t *testing.T) {
		// The linear model's squared error overflows for sure.
		lin := loader(t, linearData(), 12, tensor.Float32, true)
		res, err := run(linearModel(t, tensor.Float32, shareRows(c, 12)), &rankData{Data: lin, c: c, at: 2, nonFin: true}, context.Background(), train.Config{})
		if !errors.Is(err, graph.ErrNonFinite) || res.Steps != 2 {
			t.Fatalf("after %d steps: %v; want 2 steps and graph.ErrNonFinite on every rank", res.Steps, err)
		}
		sameOnAll(t, err)
	})
	for _, at := range []int{2, 4} {
		t.Run(fmt.Sprintf("hook at step %d of 4", at), func(t *testing.T) {
			res, err := run(model(), data(), context.Background(), train.Config{MaxSteps: 4, OnStep: func(_ *train.Trainer, s train.StepInfo) error {
				if s.Step == at && c.Rank() == last {
					return errors.New("the hook failed")
				}
				return nil
			}})
			// Held back to the next exchange: step at+1's, or the end's.
			want := fmt.Sprintf("rank %d: train: step %d (epoch 0, batch %d): the hook failed", last, at, at-1)
			if err == nil || !strings.Contains(err.Error(), want) || res.Steps != min(at, 4) {
				t.Fatalf("after %d steps: %v; want %d steps and %q", res.Steps, err, at, want)
			}
			sameOnAll(t, err)
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		dir := jobDir(t, c, "run")
		res, err := run(model(), data(), ctx, train.Config{Dir: dir, OnStep: func(_ *train.Trainer, s train.StepInfo) error {
			if s.Step == 2 && c.Rank() == last {
				cancel()
			}
			return nil
		}})
		// Rank last asks at the exchange of step 3; all stop before step 4.
		if !errors.Is(err, context.Canceled) || res.Steps != 3 {
			t.Fatalf("after %d steps: %v; want 3 steps and context.Canceled on every rank", res.Steps, err)
		}
		if c.Rank() == 0 {
			if _, err := os.Stat(filepath.Join(dir, "checkpoint.safetensors")); err != nil {
				t.Errorf("rank 0 wrote no checkpoint when stopped: %v", err)
			}
		}
	})
	for _, every := range []int{3, 1000} {
		t.Run(fmt.Sprintf("drift/ParamCheckEvery=%d", every), func(t *testing.T) {
			m := model()
			res, err := run(m, data(), context.Background(), train.Config{ParamCheckEvery: every, OnStep: func(x *train.Trainer, s train.StepInfo) error {
				if s.Step == 2 && c.Rank() == last {
					v := m.Graph.ParamTensors()[2].Value.Float32s()
					v[5] += 1e-3
					graph.MarkParamsChanged()
				}
				return nil
			}})
			name := m.Graph.ParamTensors()[2].Name
			if every == 1000 {
				// The mutation: without the check the drift goes unseen
				// until the end.
				if err != nil {
					t.Fatal(err)
				}
				if err := dist.CheckParams(c, m.Graph.ParamTensors()); err == nil {
					t.Fatal("the parameters agree although one rank changed one")
				}
				return
			}
			want := fmt.Sprintf(`train: after step 3: dist: parameters differ across ranks: first at %q`, name)
			if err == nil || !strings.Contains(err.Error(), want) || res.Steps != 3 {
				t.Fatalf("after %d steps: %v; want 3 steps and %q", res.Steps, err, want)
			}
			sameOnAll(t, err)
		})
	}
	t.Run("disagree at start", func(t *testing.T) {
		other := loader(t, d, 12, tensor.Float32, true)
		if c.Rank() == last {
			var err error
			if other, err = datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: 12, Shuffle: true, Seed: 99, DropLast: true}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := run(model(), other, context.Background(), train.Config{})
		if err == nil || !strings.Contains(err.Error(), "ranks disagree on the run") || !strings.Contains(err.Error(), "training batch 0 of epoch 0") {
			t.Fatalf("ranks with differently shuffled data: %v", err)
		}
		sameOnAll(t, err)
		cfg := train.Config{EvalEvery: 2}
		if c.Rank() == last {
			cfg.EvalEvery = 3
		}
		if _, err = run(model(), data(), context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "EvalEvery") {
			t.Fatalf("ranks with different EvalEvery: %v", err)
		}
	})
}

// TestKillWorker is a rank of the jobs TestTrainKilledRankResumes starts:
// it trains the dropout MLP into GELU_TRAIN_TEST_DIR, checkpointing every
// 2 steps, and with GELU_TRAIN_SCENARIO=kill the last rank kills itself
// (SIGKILL) at step 5; with resume it resumes.
func TestKillWorker(t *testing.T) {
	scenario := os.Getenv("GELU_TRAIN_SCENARIO")
	if scenario == "" {
		t.Skip("a rank of the jobs TestTrainKilledRankResumes starts")
	}
	c := mpitest.World(t)
	d := mlpData()
	cfg := train.Config{Comm: c, Epochs: 2, EvalEvery: 3, CheckpointEvery: 2, Dir: os.Getenv(dirEnv), Resume: scenario == "resume",
		Quiet: c.Rank() != 0, OnStep: func(_ *train.Trainer, s train.StepInfo) error {
			if scenario == "kill" && s.Step == 5 && c.Rank() == c.Size()-1 {
				fmt.Printf("rank %d: killing itself at step %d\n", c.Rank(), s.Step)
				if p, err := os.FindProcess(os.Getpid()); err == nil {
					p.Kill() // SIGKILL on Unix
				}
			}
			return nil
		}}
	x, err := train.New(mlpModel(t, shareRows(c, 12)), optim.NewAdamW(1e-3), loader(t, d, 12, tensor.Float32, true), loader(t, d, 50, tensor.Float32, false), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestTrainKilledRankResumes kills a rank of a 2-rank run at step 5: the
// job must end promptly with a non-zero status naming the dead rank, not
// hang; resuming from the checkpoint of step 4 must give the files of an
// uninterrupted run, byte for byte.
func TestTrainKilledRankResumes(t *testing.T) {
	whole, killed := t.TempDir(), t.TempDir()
	job := func(dir, scenario string, bound time.Duration) mpitest.Job {
		return mpitest.Run(t, 2, "^TestKillWorker$", bound, dirEnv+"="+dir, "GELU_TRAIN_SCENARIO="+scenario)
	}
	if j := job(whole, "whole", 5*time.Minute); j.Err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", j.Err, j.Out)
	}
	j := job(killed, "kill", 2*time.Minute)
	if j.Err == nil || !strings.Contains(j.Out, "rank 1: killing itself at step 5") || !strings.Contains(j.Out, "signal 9") {
		t.Fatalf("the job with a killed rank: %v, want a failure naming signal 9\n%s", j.Err, j.Out)
	}
	t.Logf("the job with a killed rank ended in %v: %v", j.Elapsed.Round(time.Millisecond), j.Err)
	if j := job(killed, "resume", 5*time.Minute); j.Err != nil || !strings.Contains(j.Out, "resumed from "+killed+" at step 4") {
		t.Fatalf("resumed run: %v\n%s", j.Err, j.Out)
	}
	a, b := readAll(t, whole), readAll(t, killed)
	if len(a) < 6 {
		t.Fatalf("the uninterrupted run wrote %d files", len(a))
	}
	for name, want := range a {
		if got, ok := b[name]; !ok || !slices.Equal(got, want) {
			t.Errorf("%s differs between the uninterrupted and the killed-and-resumed run", name)
		}
	}
	if len(b) != len(a) {
		t.Errorf("the resumed run's folder has %d files, the uninterrupted one's %d", len(b), len(a))
	}
}

// rankOf is a communicator's place for New's checks, which exchange
// nothing (the collectives come with Run).
type rankOf struct {
	dist.Comm
	rank, size int
}

func (r rankOf) Rank() int { return r.rank }
func (r rankOf) Size() int { return r.size }

// New refuses a model that does not have this rank's share of the global
// batch (rank 1 of 3 takes 11 of 32 rows), and a global batch smaller than
// the ranks, before anything runs; no MPI needed.
func TestTrainerChecksTheShare(t *testing.T) {
	d := linearData()
	for _, c := range []struct {
		rows, global, rank, size int
		want                     string
	}{
		{10, 32, 1, 3, "rank 1 trains rows [11, 22) of each global batch of 32, 11 rows, but the model's inputs have 10: build the model with the rows dist.Shard(32, rank, size) gives"},
		{1, 2, 2, 3, "the global batch has 2 rows, want at least one per rank"},
	} {
		_, err := train.New(linearModel(t, tensor.Float32, c.rows), &optim.SGD{LearningRate: 0.1}, loader(t, d, c.global, tensor.Float32, true), nil,
			train.Config{Comm: rankOf{rank: c.rank, size: c.size}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d rows for rank %d of %d of a batch of %d: %v, want %q", c.rows, c.rank, c.size, c.global, err, c.want)
		}
	}
	// The share's rows are right: New accepts it.
	if _, err := train.New(linearModel(t, tensor.Float32, 11), &optim.SGD{LearningRate: 0.1}, loader(t, d, 32, tensor.Float32, true), nil,
		train.Config{Comm: rankOf{rank: 1, size: 3}}); err != nil {
		t.Errorf("11 rows for rank 1 of 3 of a batch of 32: %v", err)
	}
}
