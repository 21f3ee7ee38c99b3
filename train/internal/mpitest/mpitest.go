// Package mpitest runs a package's data-parallel tests as the ranks of an
// mpirun job: a parent test starts
//
//	mpirun --allow-run-as-root --oversubscribe -np N <the test binary> -test.run ^TestRank…
//
// with GELU_DIST_WORKER=1 (Run, through train/internal/mpirun), the
// package's TestMain (Main) joins MPI in each rank, and the TestRank*
// tests, which skip outside a job (World), do the collective work. Without
// Open MPI the parent tests skip, saying what to install, unless
// GELU_DIST_REQUIRE is set (CI sets it after installing openmpi-bin),
// which turns the skip into a failure.
//
// Package train/dist's tests, which cannot import this package (it
// imports dist), use train/internal/mpirun directly with ranks of their
// own.
package mpitest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/geluproject/gelu/train/dist"
	"github.com/geluproject/gelu/train/internal/mpirun"
)

// world is the world communicator inside a test job, nil outside.
var world *dist.MPI

// Main is a TestMain: in a rank of a test job it joins MPI first, and a
// rank whose tests fail aborts the job at once rather than leaving the
// others waiting in a collective it will never join.
func Main(m *testing.M) {
	if os.Getenv(mpirun.WorkerEnv) == "" {
		os.Exit(m.Run())
	}
	w, err := dist.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test rank:", err)
		os.Exit(2)
	}
	world = w
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "rank %d: tests failed; aborting the job\n", w.Rank())
		w.Abort(code)
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "test rank:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// World is the job's communicator; outside a test job it skips t.
func World(t testing.TB) dist.Comm {
	t.Helper()
	if world == nil {
		t.Skipf("runs as a rank of an mpirun job (a parent test starts it; %s=1 marks the ranks)", mpirun.WorkerEnv)
	}
	return world
}

// Job is the outcome of one mpirun.
type Job = mpirun.Job

// Run runs this test binary's tests matching run as np ranks, with extra
// environment variables, and ends the job (mpirun and its ranks) after
// timeout. It skips t without Open MPI (see the package doc) and inside a
// job.
func Run(t *testing.T, np int, run string, timeout time.Duration, env ...string) Job {
	t.Helper()
	return mpirun.Run(t, dist.Launcher, np, run, timeout, env...)
}

// RequirePassed fails t unless the job succeeded and every TestRank test
// it ran passed on all np ranks (none skipped).
func RequirePassed(t *testing.T, j Job, np int) {
	t.Helper()
	mpirun.RequirePassed(t, j, np)
}

// InJob reports whether this process is a rank of a test job.
func InJob() bool { return world != nil }
