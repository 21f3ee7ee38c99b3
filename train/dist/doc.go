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
// (Example runs it as a process alone):
//
//	c, err := dist.Open(false) // the MPI job's under mpirun; here a process alone
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer c.Close()
//	const n = 8 // the global batch
//	lo, hi, _ := dist.Shard(n, c.Rank(), c.Size())
//	g, m, x, y := linearModel(hi - lo) // a model of this rank's rows
//	params := g.ParamTensors()
//	if err := dist.CheckModel(c, params); err != nil {
//		log.Fatal(err)
//	}
//	red, _ := dist.NewReducer(c, params, dist.Options{})
//	red.SetShare(hi-lo, n)
//	m.Set(x, filled(hi-lo, 3, 1)) // rows [lo, hi) of the global batch
//	m.Set(y, filled(hi-lo, 1, 0))
//	m.Run() // forward and backward
//	grads, _ := m.Grads()
//	if err := red.Wait(context.Background(), grads); err != nil {
//		c.Abort(1)
//	}
//	opt := &optim.SGD{LearningRate: 0.1}
//	opt.Step(params, grads)
//	// loss = mean((1.5 − 0)²); dw_k = 2·1.5·1 = 3; w = 0.5 − 0.1·3.
//	fmt.Printf("%.4f\n", params[0].Value.Float64s())
//
// The rounding: in the default mode the average differs from one process
// at batch n by the rounding of a different order of summation (the tests
// bound it); the deterministic mode costs a second collective per bucket
// and a local sum.
package dist
