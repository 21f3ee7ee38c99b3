// Package dist trains one model over many processes (data parallelism on
// MPI), with results equal to one process's: each rank trains on its share
// of every global batch, and the gradients are averaged over the ranks
// before every optimizer step, so that every rank takes the same step.
//
// MPI is Open MPI, loaded at run time (libmpi.so.40, Debian's openmpi-bin)
// without cgo: a plain go build needs no MPI, and a program that never
// calls Init never loads it. Start a program with mpirun (or srun
// --mpi=pmix under Slurm); Init then joins the job, and Launched tells
// whether the program was started as part of one. Without Open MPI, Init
// fails with an error naming the package to install; Single is the
// communicator of a process alone, on which the same code runs unchanged.
// GELU_MPI_LIB=/path/to/libmpi.so.40 loads another Open MPI build. MPICH
// and the MPI 5 standard ABI are not supported: their handles are integer
// constants of their own headers, not exported objects.
//
//   - Reducer averages gradients in a few collectives (buckets, as
//     PyTorch's DistributedDataParallel), optionally starting a bucket as
//     soon as the backward pass has produced its gradients (Ready with
//     Options.Overlap) and completing all of them before the optimizer
//     step (Wait). Its deterministic mode sums the ranks' gradients in rank
//     order, giving the same bits whatever the MPI library or network, and
//     the bits of one process that accumulates the ranks' shares in order.
//   - Shard cuts a global batch into the ranks' contiguous shares.
//   - CheckModel and CheckSame stop every rank at start when the ranks
//     disagree on the model (parameter names, dtypes, shapes) or on the
//     data (sizes, seeds); CheckParams, every K steps, when their
//     parameters have drifted apart, naming the first that differs.
//     Broadcast copies one rank's parameters to all.
//   - Agree makes one rank's failure (a file it could not write) every
//     rank's error at the same point.
//   - A rank that dies ends the job: mpirun ends the others; a rank that
//     stalls ends it through the Reducer's Timeout and Abort.
//
// Package train uses all of this when its Config.Comm is set (see train's
// package doc): a program opens the communicator with Open, which joins
// the MPI job when started by mpirun or asked to by a -dist flag, and
// builds its model with its share of the global batch (Shard). The rest
// of this doc is for loops of one's own.
//
// One training step on every rank, with a global batch of n examples
// (Example runs it whole):
//
//	c, err := dist.Init() // or dist.Single() for one process
//	if err != nil { ... }
//	defer c.Close()
//	params := g.ParamTensors()
//	if err := dist.CheckModel(c, params); err != nil { ... }
//	red, err := dist.NewReducer(c, params, dist.Options{})
//	lo, hi, _ := dist.Shard(n, c.Rank(), c.Size())
//	red.SetShare(hi-lo, n)
//	// ... forward and backward on rows [lo, hi) of the global batch ...
//	grads, _ := m.Grads()
//	if err := red.Wait(ctx, grads); err != nil {
//		c.Abort(1)
//	}
//	opt.Step(params, grads)
//
// The rounding: in the default mode the average differs from one process
// at batch n by the rounding of a different order of summation (the tests
// bound it); the deterministic mode costs a second collective per bucket
// and a local sum.
package dist
