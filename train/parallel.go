package train

// Data-parallel training (Config.Comm): every rank runs the same loop on
// its share of each global batch, the gradients are averaged over the
// ranks before the optimizer step, and every decision (stop, evaluate,
// write, fail) is taken from values the ranks exchanged, so that all of
// them take it at the same step. Rank 0 alone writes files.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/train/dist"
	"gorgonia.org/tensor"
)

// DefaultParamCheckEvery is the interval of Config.ParamCheckEvery when 0.
const DefaultParamCheckEvery = 100

// parallel is a Trainer's data-parallel state.
type parallel struct {
	c          dist.Comm
	rank, size int
	red        *dist.Reducer
	global     int // rows of a global batch
	lo, hi     int // this rank's rows of it
	checkEvery int
	// live is set during the last forward and backward pass of a step,
	// whose gradients go to the Reducer as they become final.
	live bool
	// stop: a rank's context ended; all stop before the next step.
	stop bool
	// pending is an error of this rank alone (a metrics file rank 0
	// could not write, a hook) that the next exchange makes every rank's.
	pending error
	mine    []float64 // this rank's status: loss, stop, failed
	all     []float64 // every rank's, rank after rank
}

// status fields exchanged after every step.
const (
	statusLoss = iota
	statusStop
	statusFailed
	statusLen
)

// newParallel checks that the model's inputs have this rank's share of the
// global batch; first is the training data's first batch.
func newParallel(cfg Config, f *feeds, first datasets.Batch) (*parallel, error) {
	c := cfg.Comm
	p := &parallel{c: c, rank: c.Rank(), size: c.Size(), checkEvery: cfg.ParamCheckEvery,
		mine: make([]float64, statusLen), all: make([]float64, statusLen*c.Size())}
	if p.checkEvery == 0 {
		p.checkEvery = DefaultParamCheckEvery
	}
	field, ok := first.Field(f.list[0].field)
	if !ok {
		return nil, fmt.Errorf("batches have no field %q for input %q (they have %s)", f.list[0].field, f.list[0].node.Name(), fieldNames(first))
	}
	p.global = field.Shape[0]
	var err error
	if p.lo, p.hi, err = dist.Shard(p.global, p.rank, p.size); err != nil {
		return nil, err
	}
	switch {
	case p.global < p.size:
		return nil, fmt.Errorf("data-parallel over %d ranks: the global batch has %d rows, want at least one per rank", p.size, p.global)
	case p.hi-p.lo != f.rows:
		return nil, fmt.Errorf("data-parallel over %d ranks: rank %d trains rows [%d, %d) of each global batch of %d, %d rows, but the model's inputs have %d: build the model with the rows dist.Shard(%d, rank, size) gives",
			p.size, p.rank, p.lo, p.hi, p.global, p.hi-p.lo, f.rows, p.global)
	}
	f.train = p.global
	return p, nil
}

// begin starts a data-parallel Run, before anything is written: the ranks
// must have the same model and the same run (data, settings), and the
// Reducer is made.
func (t *Trainer) beginParallel() error {
	p := t.par
	if err := dist.CheckModel(p.c, t.params); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	facts, err := t.runFacts()
	if err := t.agree(err); err != nil {
		return err
	}
	if err := dist.CheckSame(p.c, "the run (every rank must be given the same data and settings)", facts); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if p.red == nil {
		if p.red, err = dist.NewReducer(p.c, t.params, t.Config.Reduce); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		if err := p.red.SetShare(p.hi-p.lo, p.global); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	t.Machine.OnGradReady(t.gradReady)
	return nil
}

// runFacts are what every rank's run must agree on: the data (sizes and a
// hash of the first batches), the settings that change what is computed
// or when the ranks exchange anything, and the optimizer.
func (t *Trainer) runFacts() (map[string]string, error) {
	cfg := t.Config
	facts := map[string]string{
		"training batches per epoch":           strconv.Itoa(t.TrainData.NumBatches()),
		"rows of a global batch":               strconv.Itoa(t.par.global),
		"seed of the graph":                    strconv.FormatUint(t.Model.Graph.Seed(), 10),
		"Epochs, MaxSteps, GradAccum":          fmt.Sprint(cfg.Epochs, cfg.MaxSteps, cfg.GradAccum),
		"ClipNorm":                             strconv.FormatFloat(cfg.ClipNorm, 'g', -1, 64),
		"EvalEvery, EvalAtStart":               fmt.Sprint(cfg.EvalEvery, cfg.EvalAtStart),
		"Monitor, Patience, SaveBest":          fmt.Sprint(cfg.Monitor, cfg.Patience, cfg.SaveBest),
		"Dir, CheckpointEvery":                 fmt.Sprintf("%q %d", cfg.Dir, cfg.CheckpointEvery),
		"Resume, Overwrite":                    fmt.Sprint(cfg.Resume, cfg.Overwrite),
		"ParamCheckEvery":                      strconv.Itoa(t.par.checkEvery),
		"Reduce (deterministic, bucket bytes)": fmt.Sprint(cfg.Reduce.Deterministic, cfg.Reduce.BucketBytes),
		"Schedule set":                         strconv.FormatBool(cfg.Schedule != nil),
		"optimizer":                            fmt.Sprintf("%T with learning rate %v", t.Optimizer, t.Optimizer.LR()),
		"task":                                 t.Model.Task.String(),
	}
	if t.Model.Args != nil {
		args, err := modelArgsJSON(t.Model.Args)
		if err != nil {
			return nil, fmt.Errorf("Model.Args: %w", err)
		}
		facts["Model.Args"] = args
	}
	for _, d := range []struct {
		what string
		data Data
	}{{"training", t.TrainData}, {"validation", t.ValData}} {
		if d.data == nil {
			facts[d.what+" data"] = "none"
			continue
		}
		nb := d.data.NumBatches()
		facts[d.what+" batches"] = strconv.Itoa(nb)
		for _, i := range []int{0, nb - 1} {
			b, err := d.data.Batch(0, i)
			if err != nil {
				return nil, fmt.Errorf("%s data: batch %d: %w", d.what, i, err)
			}
			facts[fmt.Sprintf("%s batch %d of epoch 0 (SHA-256)", d.what, i)] = batchHash(b)
		}
	}
	return facts, nil
}

// batchHash is a SHA-256 of a batch's fields: names, shapes, ids, values.
func batchHash(b datasets.Batch) string {
	h := sha256.New()
	var n [8]byte
	word := func(v uint64) {
		binary.LittleEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	word(uint64(b.Size))
	for _, f := range b.Fields {
		h.Write([]byte(f.Name))
		word(uint64(len(f.Shape)))
		for _, d := range f.Shape {
			word(uint64(d))
		}
		for _, id := range f.IDs {
			word(uint64(id))
		}
		if f.Values != nil {
			switch v := f.Values.Data().(type) {
			case []float32:
				h.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v)))
			case []float64:
				h.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v)))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// agreeResumed checks, after the run directory was prepared, that every
// rank starts from the same state: the same position and counters (every
// rank read the same checkpoint, or none) and the same parameters and
// optimizer state, bit for bit.
func (t *Trainer) agreeResumed() error {
	p := t.par
	facts := map[string]string{
		"step, epoch, batch":                fmt.Sprint(t.step, t.epoch, t.batch),
		"loss sum and count":                fmt.Sprint(math.Float64bits(t.sinceSum), t.sinceN),
		"learning rate":                     strconv.FormatFloat(t.Optimizer.LR(), 'g', -1, 64),
		"last evaluation":                   strconv.Itoa(t.lastEval),
		"best, its step, evaluations since": fmt.Sprint(math.Float64bits(t.best), t.bestStep, t.stale),
	}
	hint := "the state a run starts from"
	if t.Config.Resume {
		hint += fmt.Sprintf(" (every rank reads %s: put Dir on a file system every rank sees)", t.checkpointPath())
	}
	if err := dist.CheckSame(p.c, hint, facts); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if err := dist.CheckParams(p.c, t.params); err != nil {
		return fmt.Errorf("train: the ranks start from different parameters (give every rank the same seed, or the same checkpoint): %w", err)
	}
	state := t.Optimizer.State()
	if err := dist.CheckModel(p.c, state); err != nil {
		return fmt.Errorf("train: optimizer state: %w", err)
	}
	if err := dist.CheckParams(p.c, state); err != nil {
		return fmt.Errorf("train: optimizer state: %w", err)
	}
	return nil
}

// gradReady hands a gradient of the step's last forward and backward pass
// to the Reducer as soon as the backward pass has made it final
// (graph.Machine.OnGradReady), so that its bucket's all-reduce can start
// while earlier layers are still being differentiated. With gradient
// accumulation the gradient is first added into the accumulated sum.
func (t *Trainer) gradReady(i int, g *tensor.Dense) error {
	p := t.par
	if !p.live {
		return nil
	}
	if t.Config.GradAccum > 1 {
		a := t.acc[i]
		if err := addScaled(a, g, 1/float64(t.Config.GradAccum), false); err != nil {
			return err
		}
		g = a
	}
	return p.red.Ready(i, g)
}

// reduce averages the step's gradients over the ranks (Reducer.Wait, or
// Discard when this rank failed to compute its own: local), then
// exchanges every rank's loss, stop request and failure, and returns the
// step's loss over the global batch. A failure anywhere is an error on
// every rank, naming the rank; so is a NaN or infinity anywhere, since it
// reaches every rank through the sum.
func (t *Trainer) reduce(ctx context.Context, loss float64, grads []*tensor.Dense, local error) (float64, error) {
	p := t.par
	local = errors.Join(local, p.pending)
	p.pending = nil
	var err error
	if local == nil {
		// Not ctx: a rank whose context ended must still take part, and
		// stops with the others after this step.
		err = p.red.Wait(context.Background(), grads)
	} else {
		err = p.red.Discard()
	}
	if err != nil {
		return 0, fmt.Errorf("averaging the gradients over %d ranks: %w (the job cannot go on: exit, and MPI ends the other ranks)", p.size, err)
	}
	p.mine[statusLoss], p.mine[statusStop], p.mine[statusFailed] = loss, 0, 0
	if ctx.Err() != nil {
		p.mine[statusStop] = 1
	}
	if local != nil {
		p.mine[statusFailed] = 1
	}
	if err := p.c.Allgather(p.mine, p.all); err != nil {
		return 0, fmt.Errorf("exchanging the ranks' losses: %w", err)
	}
	failed := false
	for r := range p.size {
		failed = failed || p.all[r*statusLen+statusFailed] != 0
		p.stop = p.stop || p.all[r*statusLen+statusStop] != 0
	}
	if failed {
		return 0, dist.Agree(p.c, local)
	}
	// The mean over the global batch, summed in rank order on every rank:
	// with equal shares the mean of the ranks' losses, as one process that
	// accumulates the shares as micro-batches computes it.
	sum, even := 0.0, p.global%p.size == 0
	for r := range p.size {
		l := p.all[r*statusLen+statusLoss]
		if !even {
			lo, hi, _ := dist.Shard(p.global, r, p.size)
			l *= float64(hi - lo)
		}
		sum += l
	}
	if even {
		loss = sum / float64(p.size)
	} else {
		loss = sum / float64(p.global)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		var each []string
		for r := range p.size {
			each = append(each, fmt.Sprintf("rank %d: %v", r, p.all[r*statusLen+statusLoss]))
		}
		return 0, fmt.Errorf("%w: the loss is %v (%v)", graph.ErrNonFinite, loss, each)
	}
	for i, g := range grads {
		if g == nil {
			continue
		}
		for j, v := range graph.Float64s(g) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%w: the gradient of %q averaged over %d ranks is %v at element %d", graph.ErrNonFinite, t.params[i].Name, p.size, v, j)
			}
		}
	}
	return loss, nil
}

// agree makes an outcome of this rank alone (a file rank 0 wrote) every
// rank's, together with any error pending from before (dist.Agree).
func (t *Trainer) agree(err error) error {
	if t.par == nil {
		return err
	}
	err = errors.Join(t.par.pending, err)
	t.par.pending = nil
	if err = dist.Agree(t.par.c, err); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// hold holds an error of this rank alone until the next exchange in
// data-parallel training (returning it at once would leave the other
// ranks waiting); alone, it returns it.
func (t *Trainer) hold(err error) error {
	if t.par == nil || err == nil {
		return err
	}
	t.par.pending = errors.Join(t.par.pending, err)
	return nil
}

// scoreParallel scores the validation data sharded: rank r the batches
// dist.Shard gives it, the sums then exchanged and added in rank order on
// every rank.
func (t *Trainer) scoreParallel(data Data) (Evaluation, error) {
	p := t.par
	lo, hi, _ := dist.Shard(data.NumBatches(), p.rank, p.size)
	s, local := t.scoreBatches(data, lo, hi)
	local = errors.Join(local, p.pending)
	p.pending = nil
	mine := make([]float64, 4)
	mine[0], mine[1], mine[2] = s.partial()
	if local != nil {
		mine[3] = 1
	}
	all := make([]float64, 4*p.size)
	if err := p.c.Allgather(mine, all); err != nil {
		return Evaluation{}, fmt.Errorf("exchanging the evaluation's sums: %w", err)
	}
	var sum, count, hits float64
	for r := range p.size {
		if all[4*r+3] != 0 {
			return Evaluation{}, dist.Agree(p.c, local)
		}
		sum, count, hits = sum+all[4*r], count+all[4*r+1], hits+all[4*r+2]
	}
	e := Evaluation{Loss: math.NaN(), Accuracy: math.NaN(), Targets: int(count)}
	if count > 0 {
		e.Loss = sum / count
		if t.Model.Task == Classification {
			e.Accuracy = hits / count
		}
	}
	return e, nil
}

// checkParams compares the ranks' parameters every checkEvery steps.
func (t *Trainer) checkParams() error {
	if p := t.par; p == nil || t.step%p.checkEvery != 0 {
		return nil
	}
	if err := dist.CheckParams(t.par.c, t.params); err != nil {
		return fmt.Errorf("train: after step %d: %w", t.step, err)
	}
	return nil
}
