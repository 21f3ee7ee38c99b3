package mpirun_test

import (
	"os"
	"testing"
	"time"

	"github.com/geluproject/gelu/train/dist"
	"github.com/geluproject/gelu/train/internal/mpirun"
)

// TestRun starts TestRankJob as 2 ranks, which pass. The body is the
// package documentation's sketch.
func TestRun(t *testing.T) {
	j := mpirun.Run(t, dist.Launcher, 2, "^TestRank", time.Minute, "GELU_MPIRUN_TEST=pass")
	mpirun.RequirePassed(t, j, 2)
}

// TestRankJob is a rank of the jobs of this package's tests. It needs no
// MPI of its own: Open MPI numbers the processes it starts in
// OMPI_COMM_WORLD_RANK. As GELU_MPIRUN_TEST says, every rank passes, or
// rank 1 skips or fails.
func TestRankJob(t *testing.T) {
	if os.Getenv(mpirun.WorkerEnv) == "" {
		t.Skip("runs as a rank of an mpirun job (TestRun and friends start it)")
	}
	rank := os.Getenv("OMPI_COMM_WORLD_RANK")
	switch mode := os.Getenv("GELU_MPIRUN_TEST"); {
	case rank == "":
		t.Fatal("OMPI_COMM_WORLD_RANK is not set in a rank of the job")
	case mode == "skip" && rank == "1":
		t.Skip("rank 1 skips on purpose")
	case mode == "fail" && rank == "1":
		t.Fatal("rank 1 fails on purpose")
	}
}
