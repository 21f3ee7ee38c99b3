package mpirun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// WorkerEnv is set in the ranks of a test job.
	WorkerEnv = "GELU_DIST_WORKER"
	// RequireEnv makes the parent tests fail instead of skipping when
	// Open MPI is missing.
	RequireEnv = "GELU_DIST_REQUIRE"
)

// Job is the outcome of one mpirun.
type Job struct {
	Out     string
	Err     error
	Elapsed time.Duration
}

// Run runs this test binary's tests matching run as np ranks, with extra
// environment variables (and WorkerEnv=1) in every rank, and ends the job
// (mpirun and its ranks) after timeout. launcher returns the path of
// mpirun, or why Open MPI cannot be used: then Run skips t, or fails it
// when RequireEnv is set. Inside a job Run skips t, so that a parent test
// matched by run does not start jobs of its own.
func Run(t *testing.T, launcher func() (string, error), np int, run string, timeout time.Duration, env ...string) Job {
	t.Helper()
	if os.Getenv(WorkerEnv) != "" {
		t.Skip("already a rank of a test job")
	}
	path, err := launcher()
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set but the MPI tests cannot run: %v", RequireEnv, err)
		}
		t.Skip(err)
	}
	env = append(env, WorkerEnv+"=1")
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
	ownGroup(cmd)
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	j := Job{Out: out.String(), Err: err, Elapsed: time.Since(start)}
	if ctx.Err() != nil {
		killGroup(cmd)
		j.Err = fmt.Errorf("the job was still running after %v and was ended: %w", timeout, ctx.Err())
	}
	return j
}

// rankTests finds the top-level TestRank* tests a job ran (subtests have
// a slash in their names).
var rankTests = regexp.MustCompile(`(?m)^=== RUN   (TestRank\w*)$`)

// RequirePassed fails t unless the job succeeded and every TestRank* test
// it ran passed on all np ranks (none skipped).
func RequirePassed(t *testing.T, j Job, np int) {
	t.Helper()
	if j.Err != nil {
		t.Fatalf("mpirun -np %d: %v\n%s", np, j.Err, j.Out)
	}
	runs, err := passed(j.Out, np)
	if err != nil {
		t.Fatalf("%v\n%s", err, j.Out)
	}
	t.Logf("mpirun -np %d: %d tests passed on each rank in %v", np, runs/np, j.Elapsed.Round(time.Millisecond))
}

// passed checks the -test.v output of a job of np ranks: every TestRank*
// test it started must have passed np times. It returns how many times
// TestRank* tests were started, over all ranks.
func passed(out string, np int) (int, error) {
	tests := rankTests.FindAllStringSubmatch(out, -1)
	if len(tests) == 0 {
		return 0, fmt.Errorf("mpirun -np %d ran no TestRank test", np)
	}
	for _, m := range tests {
		if n := strings.Count(out, "--- PASS: "+m[1]+" "); n != np {
			return 0, fmt.Errorf("mpirun -np %d: %s passed on %d ranks, want %d", np, m[1], n, np)
		}
	}
	return len(tests), nil
}
