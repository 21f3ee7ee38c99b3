//go:build unix

package dist

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireEnv makes the MPI tests fail instead of skipping when Open MPI
// is missing (CI sets it after installing openmpi-bin).
const requireEnv = "GELU_DIST_REQUIRE"

// job is the outcome of one mpirun.
type job struct {
	out     string
	err     error
	elapsed time.Duration
}

// mpirun runs the tests matching run as np ranks, with extra environment
// variables, and ends the job (mpirun and its ranks) after timeout.
func mpirun(t *testing.T, np int, run string, timeout time.Duration, env ...string) job {
	t.Helper()
	if os.Getenv(workerEnv) != "" {
		t.Skip("already a rank of a test job")
	}
	path, err := Launcher()
	if err != nil {
		if os.Getenv(requireEnv) != "" {
			t.Fatalf("%s is set but the MPI tests cannot run: %v", requireEnv, err)
		}
		t.Skip(err)
	}
	env = append(env, workerEnv+"=1")
	args := []string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np)}
	for _, e := range env {
		args = append(args, "-x", e)
	}
	args = append(args, os.Args[0], "-test.run", run, "-test.v", "-test.count=1", "-test.timeout="+timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// mpirun and the ranks get a process group of their own, so that a
	// hung job is ended whole: mpirun forwards SIGTERM to its ranks, and
	// SIGKILL to the group follows if that is not enough.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	j := job{out: out.String(), err: err, elapsed: time.Since(start)}
	if ctx.Err() != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		j.err = fmt.Errorf("the job was still running after %v and was ended: %w", timeout, ctx.Err())
	}
	return j
}

// rankTests finds the top-level tests a job ran.
var rankTests = regexp.MustCompile(`(?m)^=== RUN   (TestRank\w*)$`)

// TestMPI runs every TestRank* test as 2 and as 3 ranks (3 divides no
// power of two: uneven shards and buckets that need padding).
func TestMPI(t *testing.T) {
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			j := mpirun(t, np, "^TestRank", 5*time.Minute)
			if j.err != nil {
				t.Fatalf("mpirun -np %d: %v\n%s", np, j.err, j.out)
			}
			// Every rank must have run every test, not skipped it.
			tests := rankTests.FindAllStringSubmatch(j.out, -1)
			if len(tests) == 0 {
				t.Fatalf("mpirun -np %d ran no TestRank test\n%s", np, j.out)
			}
			for _, m := range tests {
				if n := strings.Count(j.out, "--- PASS: "+m[1]+" "); n != np {
					t.Fatalf("mpirun -np %d: %s passed on %d ranks, want %d\n%s", np, m[1], n, np, j.out)
				}
			}
			t.Logf("mpirun -np %d: %d tests passed on each rank in %v", np, len(tests)/np, j.elapsed.Round(time.Millisecond))
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
	j := mpirun(t, 2, "^TestScenario$", bound, scenarioEnv+"="+scenario)
	if j.err == nil {
		t.Fatalf("the job succeeded, want a failure\n%s", j.out)
	}
	if _, ok := j.err.(*exec.ExitError); !ok {
		t.Fatalf("%v\n%s", j.err, j.out)
	}
	for _, w := range append(want, "rank 1: "+scenario+" at step 3") {
		if !strings.Contains(j.out, w) {
			t.Fatalf("the output lacks %q\n%s", w, j.out)
		}
	}
	if strings.Contains(j.out, "completed") {
		t.Fatalf("a rank completed all steps without its peer\n%s", j.out)
	}
	t.Logf("%s: the job ended in %v with %v", scenario, j.elapsed.Round(time.Millisecond), j.err)
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
