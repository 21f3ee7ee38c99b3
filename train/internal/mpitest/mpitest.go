// Package mpitest runs a package's data-parallel tests as the ranks of an
// mpirun job: a parent test starts
//
//	mpirun --allow-run-as-root --oversubscribe -np N <the test binary> -test.run ^TestRank…
//
// with GELU_DIST_WORKER=1, the package's TestMain (Main) joins MPI in each
// rank, and the TestRank* tests, which skip outside a job (World), do the
// collective work. Without Open MPI the parent tests skip, saying what to
// install, unless GELU_DIST_REQUIRE is set (CI sets it after installing
// openmpi-bin), which turns the skip into a failure.
//
// Package train/dist has the same machinery in its own tests, which
// cannot import this package (it imports dist).
package mpitest

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

	"github.com/geluproject/gelu/train/dist"
)

const (
	// WorkerEnv is set in the ranks of a test job.
	WorkerEnv = "GELU_DIST_WORKER"
	// RequireEnv makes the parent tests fail instead of skipping when
	// Open MPI is missing.
	RequireEnv = "GELU_DIST_REQUIRE"
)

// world is the world communicator inside a test job, nil outside.
var world *dist.MPI

// Main is a TestMain: in a rank of a test job it joins MPI first, and a
// rank whose tests fail aborts the job at once rather than leaving the
// others waiting in a collective it will never join.
func Main(m *testing.M) {
	if os.Getenv(WorkerEnv) == "" {
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
		t.Skipf("runs as a rank of an mpirun job (a parent test starts it; %s=1 marks the ranks)", WorkerEnv)
	}
	return world
}

// Job is the outcome of one mpirun.
type Job struct {
	Out     string
	Err     error
	Elapsed time.Duration
}

// Run runs this test binary's tests matching run as np ranks, with extra
// environment variables, and ends the job (mpirun and its ranks) after
// timeout. It skips t without Open MPI (see the package doc) and inside a
// job.
func Run(t *testing.T, np int, run string, timeout time.Duration, env ...string) Job {
	t.Helper()
	if os.Getenv(WorkerEnv) != "" {
		t.Skip("already a rank of a test job")
	}
	path, err := dist.Launcher()
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

var rankTests = regexp.MustCompile(`(?m)^=== RUN   (TestRank\w*)$`)

// RequirePassed fails t unless the job succeeded and every TestRank test
// it ran passed on all np ranks (none skipped).
func RequirePassed(t *testing.T, j Job, np int) {
	t.Helper()
	if j.Err != nil {
		t.Fatalf("mpirun -np %d: %v\n%s", np, j.Err, j.Out)
	}
	tests := rankTests.FindAllStringSubmatch(j.Out, -1)
	if len(tests) == 0 {
		t.Fatalf("mpirun -np %d ran no TestRank test\n%s", np, j.Out)
	}
	for _, m := range tests {
		if n := strings.Count(j.Out, "--- PASS: "+m[1]+" "); n != np {
			t.Fatalf("mpirun -np %d: %s passed on %d ranks, want %d\n%s", np, m[1], n, np, j.Out)
		}
	}
	t.Logf("mpirun -np %d: %d tests passed on each rank in %v", np, len(tests)/np, j.Elapsed.Round(time.Millisecond))
}

// InJob reports whether this process is a rank of a test job.
func InJob() bool { return world != nil }
