//go:build unix

package dist

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geluproject/gelu/train/internal/mpirun"
)

// TestMPI runs every TestRank* test as 2 and as 3 ranks (3 divides no
// power of two: uneven shards and buckets that need padding).
func TestMPI(t *testing.T) {
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			j := mpirun.Run(t, Launcher, np, "^TestRank", 5*time.Minute)
			mpirun.RequirePassed(t, j, np)
		})
	}
}

// TestScenario is a rank of a job that fails on purpose: it averages a
// gradient step after step, and at step 3 the last rank dies (SIGKILL),
// stalls (stops calling into MPI), or exits with an error, as
// GELU_DIST_SCENARIO says. The parent tests check how the job ends.
func TestScenario(t *testing.T) {
	scenario := os.Getenv(scenarioEnv)
	if scenario == "" {
		t.Skipf("plays a failing rank when %s is set (TestDeadRank and friends start it)", scenarioEnv)
	}
	c := inJob(t)
	params := namedParams(testParams)
	red, err := NewReducer(c, params, Options{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for step := range 100 {
		if step == 3 && c.Rank() == c.Size()-1 {
			fmt.Printf("rank %d: %s at step %d\n", c.Rank(), scenario, step)
			switch scenario {
			case "dies":
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			case "stalls":
				time.Sleep(time.Hour)
			case "exits":
				fmt.Fprintf(os.Stderr, "rank %d: error: a data file is unreadable\n", c.Rank())
				os.Exit(1)
			}
		}
		if err := red.Wait(context.Background(), rankGrads(testParams, c.Rank(), step)); err != nil {
			fmt.Fprintf(os.Stderr, "rank %d: step %d: %v; aborting the job\n", c.Rank(), step, err)
			c.Abort(3)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("rank %d: completed\n", c.Rank())
}

// failingJob runs a scenario and checks that the job ends within bound
// (instead of hanging), with a non-zero status and the given messages.
func failingJob(t *testing.T, scenario string, bound time.Duration, want ...string) {
	j := mpirun.Run(t, Launcher, 2, "^TestScenario$", bound, scenarioEnv+"="+scenario)
	if j.Err == nil {
		t.Fatalf("the job succeeded, want a failure\n%s", j.Out)
	}
	if _, ok := j.Err.(*exec.ExitError); !ok {
		t.Fatalf("%v\n%s", j.Err, j.Out)
	}
	for _, w := range append(want, "rank 1: "+scenario+" at step 3") {
		if !strings.Contains(j.Out, w) {
			t.Fatalf("the output lacks %q\n%s", w, j.Out)
		}
	}
	if strings.Contains(j.Out, "completed") {
		t.Fatalf("a rank completed all steps without its peer\n%s", j.Out)
	}
	t.Logf("%s: the job ended in %v with %v", scenario, j.Elapsed.Round(time.Millisecond), j.Err)
}

// TestDeadRank kills a rank in the middle of training: mpirun must end
// the whole job and say which rank died, not leave the other waiting.
func TestDeadRank(t *testing.T) {
	failingJob(t, "dies", time.Minute, "exited on signal 9")
}

// TestStalledRank stops a rank without killing it, which the launcher
// cannot see: the Reducer's Timeout must end the wait on the other rank,
// which aborts the job.
func TestStalledRank(t *testing.T) {
	failingJob(t, "stalls", time.Minute, "dist: rank 0: gradients not reduced after 3", "(waiting for bucket 1 of 2, 136 float32 elements): a rank died or stopped calling Wait; aborting the job")
}

// TestFailedRank ends a rank with an error: the job must end with it.
func TestFailedRank(t *testing.T) {
	failingJob(t, "exits", time.Minute, "a data file is unreadable", "exited")
}
