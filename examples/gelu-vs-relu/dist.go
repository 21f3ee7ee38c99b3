package main

// The single-run mode: one run of the grid (one optimizer, activation,
// learning rate and seed) trained data-parallel over the processes of an
// MPI job, each on its share of every batch of -batch examples, with the
// same steps as one process (package train/dist). -dist asks for it, and
// a program started by mpirun (or srun --mpi=pmix) as one of several
// processes takes it without asking:
//
//	go build -o gelu-vs-relu ./examples/gelu-vs-relu
//	mpirun -np 4 ./gelu-vs-relu -opts adam -acts gelu -seeds 1 -out out/gvr-dist
//
// It writes the trainer's files into -out (steps.csv, evals.csv with the
// test set's loss and accuracy, checkpoint.safetensors, model.safetensors;
// -resume continues a stopped run) and prints the final test error. The
// grid's report needs several seeds: run the grid for that.

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/dist"
)

// mainDist runs the single-run mode and exits: with status 1 after an
// error, without finalizing MPI, so that mpirun ends every rank.
func mainDist(ctx context.Context, c config) {
	comm, line, err := trainDist(ctx, c)
	if err != nil {
		rank := ""
		if comm != nil && comm.Size() > 1 {
			rank = fmt.Sprintf(" (rank %d)", comm.Rank())
		}
		fmt.Fprintf(os.Stderr, "gelu-vs-relu%s: %v\n", rank, err)
		os.Exit(1)
	}
	if err := comm.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "gelu-vs-relu:", err)
		os.Exit(1)
	}
	if line != "" {
		fmt.Println(line)
	}
}

// trainDist trains the run and returns the communicator and, on rank 0,
// the line to print.
func trainDist(ctx context.Context, c config) (dist.Comm, string, error) {
	if err := c.validate(); err != nil {
		return nil, "", err
	}
	if n := gridRuns(c); n != 1 || c.Part.Count > 1 || c.Merge {
		return nil, "", fmt.Errorf("-dist trains one run data-parallel, but the grid has %d runs (%d optimizers × %d activations × %d learning rates × %d seeds)%s: give one of each, e.g. -opts adam -acts gelu -seeds 1",
			n, len(c.Opts), len(c.Acts), len(c.lrs(c.Opts[0])), c.Seeds, map[bool]string{true: " and -shard or -merge"}[c.Part.Count > 1 || c.Merge])
	}
	comm, err := dist.Open(c.Dist)
	if err != nil {
		return nil, "", err
	}
	d, err := loadData(c)
	if err != nil {
		return comm, "", err
	}
	l, err := d.Loaders(c.Batch, c.Seed)
	if err != nil {
		return comm, "", err
	}
	lo, hi, err := dist.Shard(c.Batch, comm.Rank(), comm.Size())
	if err != nil {
		return comm, "", err
	}
	opt, act := c.Opts[0], c.Acts[0]
	lr := c.lrs(opt)[0]
	model, _, err := network(c, d, act, c.Seed, c.Dropout, hi-lo)
	if err != nil {
		return comm, "", err
	}
	var o optim.Optimizer = optim.NewAdam(lr)
	if opt == "sgd" {
		o = &optim.SGD{LearningRate: lr, Momentum: c.Momentum}
	}
	t, err := train.New(model, o, l.Train, l.Test, train.Config{Epochs: c.Epochs, EvalEvery: d.EvalEvery,
		Dir: c.Out, Resume: c.Resume, Quiet: c.Quiet, Comm: comm})
	if err != nil {
		return comm, "", err
	}
	res, err := t.Run(ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w (-resume continues it)", err)
		}
		return comm, "", err
	}
	if comm.Rank() != 0 {
		return comm, "", nil
	}
	last := res.Evals[len(res.Evals)-1]
	return comm, fmt.Sprintf("wrote %s: %s, %s, lr %g, seed %d, %d steps of %d examples on %d processes; test error %.2f%%, test loss %.4f",
		c.Out, opt, act.Name(), lr, c.Seed, res.Steps, c.Batch, comm.Size(), 100*(1-last.ValAccuracy), last.ValLoss), nil
}

// gridRuns is the number of runs of the grid c describes.
func gridRuns(c config) int {
	n := 0
	for _, o := range c.Opts {
		n += len(c.lrs(o))
	}
	return n * len(c.Acts) * c.Seeds
}
