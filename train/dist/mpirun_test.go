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

// mpirunPath finds the launcher or says why the MPI tests cannot run.
func mpirunPath() (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	p, err := exec.LookPath("mpirun")
	if err != nil {
		return "", fmt.Errorf("mpirun is not installed (%v); %s", err, installHintAll)
	}
	return p, nil
}

// installHintAll is the package that brings both the library and mpirun.
const installHintAll = "apt-get install openmpi-bin"

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
	path, err := mpirunPath()
	if err != nil {
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
