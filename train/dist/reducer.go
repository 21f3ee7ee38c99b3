package dist

// Gradient averaging for data-parallel training, after PyTorch's
// DistributedDataParallel: gradients are copied into a few flat buckets
// (one collective per bucket, not per parameter), and a bucket's reduction
// starts as soon as the backward pass has produced all of its gradients,
// while later ones are still being computed.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// DefaultBucketBytes is the bucket size when Options.BucketBytes is 0:
// DDP's bucket_cap_mb of 25 MiB.
const DefaultBucketBytes = 25 << 20

// Options configure a Reducer.
type Options struct {
	// BucketBytes caps a bucket's size (a parameter larger than it gets a
	// bucket of its own). 0 means DefaultBucketBytes.
	BucketBytes int
	// Deterministic sums the ranks' gradients in rank order, r = 0, 1, …,
	// on the rank that owns each slice of a bucket (an all-to-all moves
	// every slice to its owner, an all-gather returns the sums), instead of
	// MPI_Allreduce in whatever order the library's algorithm chooses. The
	// result is the same bits for any MPI library, algorithm, or number of
	// nodes, and bit-identical to one process that adds the N shares'
	// scaled gradients left to right (see Reducer). It moves the same bytes
	// as a ring all-reduce in two collectives plus a local sum.
	Deterministic bool
	// Overlap starts a bucket's reduction in Ready, as soon as the
	// backward pass has handed over all of its gradients, with
	// nonblocking collectives that run while later gradients are still
	// being computed (as far as the MPI library advances them: Open MPI
	// moves a nonblocking collective on only while a rank is inside an MPI
	// call, which Ready makes by testing the buckets in flight). Without
	// it Ready only copies the gradients into the buckets and Wait reduces
	// them with blocking collectives. Every rank must use the same
	// setting: MPI never matches a rank's blocking collective with another
	// rank's nonblocking one, so the kind of every bucket's collectives is
	// fixed by this setting alone, not by which gradients Ready got.
	Overlap bool
	// Timeout bounds each Wait. A reduction not complete within it means
	// that a rank died or stopped calling Wait without the launcher
	// noticing (mpirun notices a death; a stalled process, or srun without
	// --kill-on-bad-exit, does not): the rank prints which bucket it was
	// waiting for and aborts the job (MPI_Abort), since a collective in
	// progress cannot be abandoned. 0 waits for ever.
	Timeout time.Duration
}

// Reducer averages the gradients of one model's parameters over the ranks
// of a communicator, step after step.
//
// Each rank scales its gradients by its share of the step's examples
// (SetShare; 1/Size by default) as it copies them into the buckets, and the
// buckets are summed over the ranks, so every rank ends with
//
//	Σ_r share_r · g_r
//
// the mean gradient over the global batch when each g_r is the mean over
// rank r's examples. The share is rounded to the gradient's type once and
// each g_r·share_r is rounded once; in the deterministic mode the sum is
// then ((x₀ + x₁) + x₂) + … in that type, and in the default mode whatever
// order the MPI library uses.
//
// A step: hand each gradient over with Ready as the backward pass produces
// it (optional; with Options.Overlap it starts the reduction of a bucket
// early; graph.Machine.OnGradReady calls it at the right time), then call Wait
// with all the gradients, which hands over those not yet handed over,
// completes every bucket and writes the averages into the gradient tensors.
// A nil gradient (a parameter that does not affect the loss) contributes
// zeros and stays nil.
//
// A Reducer is not safe for concurrent use. Every rank must build its
// Reducer from the same parameters in the same order and call Wait once
// per step; after an error the communicator is in an unknown state and
// the job should Abort.
type Reducer struct {
	comm   Comm // reductions (all-reduce, or the all-to-all of the deterministic mode)
	gather Comm // the deterministic mode's all-gathers, matched apart from the all-to-alls
	opts   Options
	rank   int
	size   int
	share  float64
	params []slot
	bucket []*bucket

	current  atomic.Int32 // the bucket Wait is waiting for, for the Timeout's message
	launched int          // buckets whose first collective has started this step
	gathered int          // deterministic mode: buckets whose all-gather has started
	handed   int          // parameters handed over this step
	broken   error
}

// slot is a parameter's place in a bucket.
type slot struct {
	name        string
	kind        kind
	shape       tensor.Shape
	bucket, off int
	handed      bool
	grad        *tensor.Dense // this step's gradient; nil for none
}

// bucket is a flat buffer of several parameters' gradients of one type.
type bucket struct {
	index   int
	kind    kind
	params  []int
	n       int // elements, padded to a multiple of Size in the deterministic mode
	pending int // parameters not yet handed over this step
	f32     []float32
	f64     []float64
	// recv is the deterministic mode's all-to-all target: Size blocks of
	// n/Size elements, block q from rank q.
	recv32 []float32
	recv64 []float64
	req    Request
	state  int // one of the bucket states below
}

const (
	idle      = iota // waiting for gradients
	reducing         // all-reduce (or all-to-all) in flight
	gathering        // deterministic mode: all-gather in flight
	reduced          // result in the buffer
)

var kindOfDtype = map[tensor.Dtype]kind{tensor.Float32: kFloat32, tensor.Float64: kFloat64}

// NewReducer prepares the buckets for params (in the order the gradients
// will be passed to Ready and Wait, which is the order of graph.Machine's
// Params and Grads). Parameters are placed in buckets last to first,
// because the backward pass produces the gradients of the last layers
// first; float32 and float64 parameters go to separate buckets. The
// Reducer duplicates c, so its collectives never mix with the caller's.
func NewReducer(c Comm, params []graph.NamedTensor, opts Options) (*Reducer, error) {
	const who = "dist.NewReducer"
	if c == nil {
		return nil, fmt.Errorf("%s: nil communicator (use Init, or Single for one process)", who)
	}
	if opts.BucketBytes < 0 {
		return nil, fmt.Errorf("%s: BucketBytes %d, want ≥ 0 (0 for %d)", who, opts.BucketBytes, DefaultBucketBytes)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("%s: Timeout %v, want ≥ 0 (0 for none)", who, opts.Timeout)
	}
	if opts.BucketBytes == 0 {
		opts.BucketBytes = DefaultBucketBytes
	}
	r := &Reducer{opts: opts, rank: c.Rank(), size: c.Size(), share: 1 / float64(c.Size()), params: make([]slot, len(params))}
	seen := make(map[string]bool, len(params))
	for i, p := range params {
		if p.Value == nil {
			return nil, fmt.Errorf("%s: parameter %d (%q) has no value", who, i, p.Name)
		}
		k, ok := kindOfDtype[p.Value.Dtype()]
		if !ok {
			return nil, fmt.Errorf("%s: parameter %q is %v, want float32 or float64", who, p.Name, p.Value.Dtype())
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s: parameter %q is listed twice", who, p.Name)
		}
		seen[p.Name] = true
		r.params[i] = slot{name: p.Name, kind: k, shape: p.Value.Shape().Clone(), bucket: -1}
	}
	// open[k] is the bucket being filled with parameters of kind k.
	open := map[kind]*bucket{}
	for i := len(params) - 1; i >= 0; i-- {
		s := &r.params[i]
		n := s.shape.TotalSize()
		b := open[s.kind]
		if b != nil && b.n > 0 && (b.n+n)*kinds[s.kind].size > opts.BucketBytes {
			b = nil
		}
		if b == nil {
			b = &bucket{kind: s.kind, index: len(r.bucket)}
			open[s.kind] = b
			r.bucket = append(r.bucket, b)
		}
		s.bucket, s.off = b.index, b.n
		b.params = append(b.params, i)
		b.n += n
	}
	for _, b := range r.bucket {
		if opts.Deterministic {
			b.n = (b.n + r.size - 1) / r.size * r.size
		}
		if b.kind == kFloat32 {
			b.f32 = make([]float32, b.n)
			if opts.Deterministic {
				b.recv32 = make([]float32, b.n)
			}
		} else {
			b.f64 = make([]float64, b.n)
			if opts.Deterministic {
				b.recv64 = make([]float64, b.n)
			}
		}
	}
	var err error
	if r.comm, err = c.Dup(); err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	if opts.Deterministic {
		if r.gather, err = c.Dup(); err != nil {
			r.comm.Close()
			return nil, fmt.Errorf("%s: %w", who, err)
		}
	}
	r.reset()
	return r, nil
}

// Buckets returns the number of buckets, the collectives per step (two
// each in the deterministic mode).
func (r *Reducer) Buckets() int { return len(r.bucket) }

// SetShare sets this rank's share of each step's examples, local of
// global, until changed: the weight of its gradients in the average. With
// equal shares (the default) the result is the plain mean over ranks; with
// a global batch that does not divide evenly (see Shard) each rank passes
// its own count, so that the step still averages over the global batch.
// A rank with no examples passes 0 (and nil gradients).
func (r *Reducer) SetShare(local, global int) error {
	if global <= 0 || local < 0 || local > global {
		return fmt.Errorf("dist.Reducer.SetShare(%d, %d): want 0 ≤ local ≤ global and global > 0", local, global)
	}
	if r.handed > 0 {
		return fmt.Errorf("dist.Reducer.SetShare(%d, %d): gradients of this step were already handed over; set the share before the step", local, global)
	}
	r.share = float64(local) / float64(global)
	return nil
}

// Ready hands over the gradient of parameter i (nil for none) as soon as
// it is final, scaling it into its bucket. With Options.Overlap, when it
// completes a bucket and every earlier bucket has started, the bucket's
// reduction starts. The gradient tensor must not change until Wait
// returns, and must be the one then passed to Wait. Ranks may hand over
// different gradients through Ready: what they reduce and how does not
// depend on it.
func (r *Reducer) Ready(i int, g *tensor.Dense) error {
	if r.broken != nil {
		return r.broken
	}
	if i < 0 || i >= len(r.params) {
		return fmt.Errorf("dist.Reducer.Ready: parameter %d, want 0 ≤ i < %d", i, len(r.params))
	}
	if err := r.handOver(i, g); err != nil {
		return err
	}
	if !r.opts.Overlap {
		return nil
	}
	if err := r.launch(); err != nil {
		return r.fail(err)
	}
	return r.fail(r.progress())
}

// handOver scales gradient i into its bucket.
func (r *Reducer) handOver(i int, g *tensor.Dense) error {
	s := &r.params[i]
	if s.handed {
		return fmt.Errorf("dist.Reducer: gradient of %q handed over twice in one step", s.name)
	}
	if g != nil {
		if k, ok := kindOfDtype[g.Dtype()]; !ok || k != s.kind || !graph.SameShape(g.Shape(), s.shape) {
			return fmt.Errorf("dist.Reducer: gradient of %q is %v%v, want %v%v like the parameter", s.name, g.Dtype(), g.Shape(), s.kind, s.shape)
		}
		if g.RequiresIterator() || g.DataSize() != g.Shape().TotalSize() {
			return fmt.Errorf("dist.Reducer: gradient of %q %v is a view or not contiguous; pass a materialized tensor", s.name, g.Shape())
		}
	}
	b := r.bucket[s.bucket]
	n := s.shape.TotalSize()
	if b.kind == kFloat32 {
		var src []float32
		if g != nil {
			src = g.Float32s()
		}
		scaleInto(b.f32[s.off:s.off+n], src, float32(r.share))
	} else {
		var src []float64
		if g != nil {
			src = g.Float64s()
		}
		scaleInto(b.f64[s.off:s.off+n], src, r.share)
	}
	s.handed, s.grad = true, g
	b.pending--
	r.handed++
	return nil
}

type float interface{ ~float32 | ~float64 }

// scaleInto sets dst = src·w, or zeros without src.
func scaleInto[T float](dst, src []T, w T) {
	if src == nil {
		clear(dst)
		return
	}
	for j, v := range src {
		dst[j] = v * w
	}
}

// launch starts the reduction of every complete bucket that follows the
// last started one: collectives start in bucket order on every rank.
func (r *Reducer) launch() error {
	for r.launched < len(r.bucket) && r.bucket[r.launched].pending == 0 {
		b := r.bucket[r.launched]
		var err error
		switch {
		case r.opts.Deterministic && b.kind == kFloat32:
			b.req, err = r.comm.Ialltoall(b.f32, b.recv32)
		case r.opts.Deterministic:
			b.req, err = r.comm.Ialltoall(b.f64, b.recv64)
		case b.kind == kFloat32:
			b.req, err = r.comm.Iallreduce(b.f32, Sum)
		default:
			b.req, err = r.comm.Iallreduce(b.f64, Sum)
		}
		if err != nil {
			return err
		}
		b.state = reducing
		r.launched++
	}
	return nil
}

// progress advances the buckets in flight without blocking (MPI moves a
// nonblocking collective on only while a rank is inside a call), and in
// the deterministic mode starts the all-gathers, in bucket order, of the
// buckets whose all-to-all is done.
func (r *Reducer) progress() error {
	for j := r.gathered; j < r.launched; j++ {
		b := r.bucket[j]
		ok, err := b.req.Test()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if err := r.finish(j); err != nil {
			return err
		}
	}
	return nil
}

// finish moves bucket j on once its current collective has completed.
func (r *Reducer) finish(j int) error {
	b := r.bucket[j]
	if b.state == gathering || !r.opts.Deterministic {
		b.state = reduced
		if !r.opts.Deterministic {
			r.gathered = j + 1
		}
		return nil
	}
	if j != r.gathered {
		return nil // all-gathers start in bucket order
	}
	// Sum this rank's slice over the ranks, in rank order, into the first
	// block of recv, and gather every rank's summed slice into the bucket.
	m := b.n / r.size
	var err error
	if b.kind == kFloat32 {
		sumBlocks(b.recv32, m, r.size)
		b.req, err = r.gather.Iallgather(b.recv32[:m], b.f32)
	} else {
		sumBlocks(b.recv64, m, r.size)
		b.req, err = r.gather.Iallgather(b.recv64[:m], b.f64)
	}
	if err != nil {
		return err
	}
	b.state = gathering
	r.gathered = j + 1
	return nil
}

// sumBlocks sets x[j] = ((x[j] + x[m+j]) + x[2m+j]) + … over the blocks.
func sumBlocks[T float](x []T, m, blocks int) {
	for q := 1; q < blocks; q++ {
		src := x[q*m : (q+1)*m]
		dst := x[:m]
		for j, v := range src {
			dst[j] += v
		}
	}
}

// Wait hands over every gradient of grads not handed over by Ready,
// completes the reductions and writes the averages into the gradient
// tensors (nil ones stay nil). grads holds one entry per parameter, in
// NewReducer's order, the tensors given to Ready among them.
//
// ctx is checked before any collective starts; once they have, Wait
// blocks until they complete (MPI cannot abandon a collective): a rank
// that stops early must end the job with Abort, and Options.Timeout
// bounds the wait for a rank that never arrives.
func (r *Reducer) Wait(ctx context.Context, grads []*tensor.Dense) error {
	if r.broken != nil {
		return r.broken
	}
	if len(grads) != len(r.params) {
		return fmt.Errorf("dist.Reducer.Wait: %d gradients for %d parameters", len(grads), len(r.params))
	}
	for i, g := range grads {
		s := &r.params[i]
		if !s.handed {
			if err := r.handOver(i, g); err != nil {
				return err
			}
		} else if s.grad != g {
			return fmt.Errorf("dist.Reducer.Wait: the gradient of %q is not the tensor handed to Ready", s.name)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dist.Reducer.Wait: %w", err)
	}
	if err := r.complete(); err != nil {
		return err
	}
	for _, b := range r.bucket {
		for _, i := range b.params {
			s := &r.params[i]
			if s.grad == nil {
				continue
			}
			n := s.shape.TotalSize()
			if b.kind == kFloat32 {
				copy(s.grad.Float32s(), b.f32[s.off:s.off+n])
			} else {
				copy(s.grad.Float64s(), b.f64[s.off:s.off+n])
			}
		}
	}
	r.reset()
	return nil
}

// Discard ends a step in which this rank failed (its data could not be
// read, say) without leaving the others waiting: it hands over zeros for
// the gradients not handed over, completes the step's collectives as Wait
// does, and writes nothing into the gradients. The step's averages are
// then meaningless on every rank; the ranks learn of the failure by their
// next collective of their own (see train, which exchanges a failure flag
// after every step) and stop together.
func (r *Reducer) Discard() error {
	if r.broken != nil {
		return r.broken
	}
	for i := range r.params {
		if !r.params[i].handed {
			if err := r.handOver(i, nil); err != nil {
				return err
			}
		}
	}
	err := r.complete()
	r.reset()
	return err
}

// complete completes the step's collectives, every gradient having been
// handed over.
func (r *Reducer) complete() error {
	if r.opts.Timeout > 0 {
		start := time.Now()
		watchdog := time.AfterFunc(r.opts.Timeout, func() {
			fmt.Fprintf(os.Stderr, "dist: rank %d: gradients not reduced after %v (waiting for %s): a rank died or stopped calling Wait; aborting the job\n",
				r.rank, time.Since(start).Round(time.Millisecond), r.bucketName(int(r.current.Load())))
			r.comm.Abort(timeoutStatus)
		})
		defer watchdog.Stop()
	}
	ctx := context.Background() // the collectives block: see Wait
	// With Overlap every bucket is reduced with nonblocking collectives:
	// those Ready did not start start now, in bucket order, and all are
	// completed in order (in the deterministic mode each one's all-gather
	// starts as its all-to-all ends). Without it every bucket is reduced
	// here with blocking collectives, which Open MPI runs as fast as its
	// nonblocking ones or faster (BenchmarkAllreduce blocking/nonblocking).
	// Either way every rank starts the same kind of collectives in the
	// same order, whichever gradients Ready got.
	if r.opts.Overlap {
		if err := r.launch(); err != nil {
			return r.fail(err)
		}
	}
	for j := range r.launched {
		if b := r.bucket[j]; b.state == reducing {
			r.current.Store(int32(j))
			if err := b.req.Wait(ctx); err != nil {
				return r.fail(r.notReduced(j, err))
			}
			if err := r.finish(j); err != nil {
				return r.fail(err)
			}
		}
	}
	for j := r.launched; j < len(r.bucket); j++ {
		r.current.Store(int32(j))
		if err := r.reduceNow(j); err != nil {
			return r.fail(r.notReduced(j, err))
		}
	}
	for j, b := range r.bucket {
		if b.state == gathering {
			r.current.Store(int32(j))
			if err := b.req.Wait(ctx); err != nil {
				return r.fail(r.notReduced(j, err))
			}
			if err := r.finish(j); err != nil {
				return r.fail(err)
			}
		}
	}
	return nil
}

// timeoutStatus is the exit status of a job aborted by Options.Timeout.
const timeoutStatus = 3

// bucketName describes bucket j for messages.
func (r *Reducer) bucketName(j int) string {
	b := r.bucket[j]
	return fmt.Sprintf("bucket %d of %d, %d %s elements", j+1, len(r.bucket), b.n, b.kind)
}

// notReduced is the error of a bucket whose reduction failed.
func (r *Reducer) notReduced(j int, err error) error {
	return fmt.Errorf("dist.Reducer: %s not reduced: %w", r.bucketName(j), err)
}

// reduceNow reduces bucket j, which no collective has touched this step,
// with blocking collectives.
func (r *Reducer) reduceNow(j int) error {
	b := r.bucket[j]
	m := b.n / r.size
	var err error
	switch {
	case !r.opts.Deterministic && b.kind == kFloat32:
		err = r.comm.Allreduce(b.f32, Sum)
	case !r.opts.Deterministic:
		err = r.comm.Allreduce(b.f64, Sum)
	case b.kind == kFloat32:
		if err = r.comm.Alltoall(b.f32, b.recv32); err == nil {
			sumBlocks(b.recv32, m, r.size)
			err = r.gather.Allgather(b.recv32[:m], b.f32)
		}
	default:
		if err = r.comm.Alltoall(b.f64, b.recv64); err == nil {
			sumBlocks(b.recv64, m, r.size)
			err = r.gather.Allgather(b.recv64[:m], b.f64)
		}
	}
	if err != nil {
		return err
	}
	b.state = reduced
	r.launched, r.gathered = j+1, j+1
	return nil
}

// reset starts a new step.
func (r *Reducer) reset() {
	for i := range r.params {
		r.params[i].handed, r.params[i].grad = false, nil
	}
	for _, b := range r.bucket {
		b.pending, b.state, b.req = len(b.params), idle, nil
	}
	r.launched, r.gathered, r.handed = 0, 0, 0
}

// fail records err as fatal for the Reducer.
func (r *Reducer) fail(err error) error {
	if err != nil && r.broken == nil {
		r.broken = fmt.Errorf("%w (the Reducer stopped at this error; Abort the job)", err)
		return err
	}
	return err
}

// Close releases the Reducer's communicators.
func (r *Reducer) Close() error {
	var errs []error
	for _, c := range []Comm{r.comm, r.gather} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	r.broken = errors.New("dist.Reducer: closed")
	return errors.Join(errs...)
}
