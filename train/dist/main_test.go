package dist

// The MPI tests run this test binary as the ranks of an mpirun job: a
// parent test (TestMPI, TestDeadRank, …) starts
//
//	mpirun --allow-run-as-root --oversubscribe -np N <this binary> -test.run ^TestRank…
//
// with GELU_DIST_WORKER=1 (through train/internal/mpirun: mpitest, which
// the packages above dist use, imports dist), TestMain initializes MPI in
// each rank, and the TestRank* tests do the collective work. Outside such
// a job the TestRank* tests skip; without Open MPI (libmpi.so.40 and
// mpirun) the parent tests skip, saying what to install.

import (
	"fmt"
	"os"
	"testing"

	"github.com/geluproject/gelu/train/internal/mpirun"
)

const (
	workerEnv   = mpirun.WorkerEnv     // set in the ranks of a test job
	scenarioEnv = "GELU_DIST_SCENARIO" // which failure scenario a job plays
)

// testWorld is the world communicator inside a test job, nil outside.
var testWorld *MPI

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "" {
		os.Exit(m.Run())
	}
	w, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test rank:", err)
		os.Exit(2)
	}
	testWorld = w
	code := m.Run()
	if code != 0 {
		// A failed rank ends the job at once rather than leaving the
		// others waiting in a collective it will never join.
		fmt.Fprintf(os.Stderr, "rank %d: tests failed; aborting the job\n", w.Rank())
		w.Abort(code)
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "test rank:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// inJob skips a TestRank* test outside an mpirun test job.
func inJob(t testing.TB) *MPI {
	t.Helper()
	if testWorld == nil {
		t.Skipf("runs as a rank of an mpirun job (TestMPI starts it; %s=1 marks the ranks)", workerEnv)
	}
	return testWorld
}
