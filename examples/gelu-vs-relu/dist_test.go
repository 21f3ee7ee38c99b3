//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/train/dist"
)

// distChildEnv makes the test binary run main with the arguments after
// "--": the ranks of the jobs TestDistUnderMPI starts, the process of
// TestDistWithoutMPI.
const distChildEnv = "GELU_GVR_MAIN"

// TestDistMain is main in a child process (see distChildEnv).
func TestDistMain(t *testing.T) {
	if os.Getenv(distChildEnv) == "" {
		t.Skip("main in the child processes of the -dist tests")
	}
	for i, a := range os.Args {
		if a == "--" {
			os.Args = append([]string{"gelu-vs-relu"}, os.Args[i+1:]...)
			break
		}
	}
	main()
}

// tinyDist is a single run at a size that takes seconds.
func tinyDist(out string) []string {
	return []string{"-opts", "adam", "-acts", "gelu", "-seeds", "1", "-epochs", "1", "-train-n", "640", "-test-n", "256",
		"-val", "0", "-layers", "2", "-width", "16", "-batch", "64", "-evals-per-epoch", "2", "-quiet", "-out", out}
}

// child runs the test binary's main with args, under mpirun -np np when
// np > 0, and returns its output and error.
func child(t *testing.T, np int, args []string, env ...string) (string, error) {
	t.Helper()
	cmdline := append([]string{os.Args[0], "-test.run=^TestDistMain$", "--"}, args...)
	env = append(env, distChildEnv+"=1")
	if np > 0 {
		mpirun, err := dist.Launcher()
		if err != nil {
			if os.Getenv("GELU_DIST_REQUIRE") != "" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		pre := []string{mpirun, "--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np)}
		for _, e := range env {
			pre = append(pre, "-x", e)
		}
		cmdline = append(pre, cmdline...)
	} else if emu := strings.Fields(os.Getenv("GELU_TEST_EXEC")); len(emu) > 0 {
		// Under an emulator (the arm64 run under qemu-user) the test
		// binary runs through the command GELU_TEST_EXEC names.
		cmdline = append(emu, cmdline...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdline[0], cmdline[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// mpirun and its ranks in a group of their own, ended whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	return out.String(), err
}

// Started by mpirun, the program trains the one run data-parallel without
// being asked (-dist is not given), rank 0 writes the trainer's files, and
// the same command twice writes the same bytes.
func TestDistUnderMPI(t *testing.T) {
	if os.Getenv(distChildEnv) != "" {
		t.Skip("a child")
	}
	a, b := t.TempDir(), t.TempDir()
	outA, err := child(t, 2, tinyDist(a))
	if err != nil {
		t.Fatalf("mpirun -np 2: %v\n%s", err, outA)
	}
	if !strings.Contains(outA, "10 steps of 64 examples on 2 processes; test error") {
		t.Fatalf("the output does not report 10 steps on 2 processes:\n%s", outA)
	}
	if outB, err := child(t, 2, tinyDist(b)); err != nil {
		t.Fatalf("mpirun -np 2, again: %v\n%s", err, outB)
	}
	steps, err := os.ReadFile(filepath.Join(a, "steps.csv"))
	if err != nil || strings.Count(string(steps), "\n") != 11 {
		t.Fatalf("steps.csv: %v, %d lines, want a header and 10 steps", err, strings.Count(string(steps), "\n"))
	}
	if n := extest.SameFiles(t, a, b); n < 6 {
		t.Errorf("%d files compared, want the trainer's 6 or more", n)
	}
	t.Log(strings.TrimSpace(outA))
}

// -dist without Open MPI fails, naming the Debian package to install.
func TestDistWithoutMPI(t *testing.T) {
	if os.Getenv(distChildEnv) != "" {
		t.Skip("a child")
	}
	out, err := child(t, 0, append(tinyDist(t.TempDir()), "-dist"), "GELU_MPI_LIB=/nonexistent/libmpi.so.40")
	if err == nil || !strings.Contains(out, "apt-get install openmpi-bin") {
		t.Fatalf("-dist without MPI: %v, want a failure naming openmpi-bin:\n%s", err, out)
	}
}

// -dist trains one run: a grid of several is refused, saying what to give.
func TestDistNeedsOneRun(t *testing.T) {
	c, err := parseIn([]string{"-dist"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = trainDist(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "the grid has 50 runs (2 optimizers × 5 activations × 1 learning rates × 5 seeds)") {
		t.Fatalf("-dist with the whole grid: %v", err)
	}
}
