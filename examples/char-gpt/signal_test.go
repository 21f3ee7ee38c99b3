//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geluproject/gelu/train/safetensors"
)

// signalChildEnv makes the test binary run main with the arguments after
// "--" (the child of TestCtrlCLeavesACheckpoint).
const signalChildEnv = "GELU_CHARGPT_MAIN"

// Ctrl-C (SIGINT) stops a running char-gpt at its next step: the run in
// progress writes a checkpoint and its model, and the program exits with
// status 1 and an error saying it was cancelled.
func TestCtrlCLeavesACheckpoint(t *testing.T) {
	if os.Getenv(signalChildEnv) != "" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"char-gpt"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		return
	}
	out := t.TempDir()
	// Under an emulator (the arm64 run under qemu-user, which hands the
	// signal to the program it runs) the test binary runs through the
	// command GELU_TEST_EXEC names.
	argv := append(strings.Fields(os.Getenv("GELU_TEST_EXEC")), os.Args[0], "-test.run=^TestCtrlCLeavesACheckpoint$", "--")
	cmd := exec.Command(argv[0], append(argv[1:],
		"-out", out, "-text", tinyText(t), "-mlp", "relu", "-lrs", "0.002", "-seeds", "1", "-workers", "1", "-quiet",
		"-T", "8", "-d-model", "16", "-heads", "2", "-blocks", "1", "-ff", "48", "-batch", "8",
		"-steps", "1000000", "-eval-every", "10", "-warmup", "5")...)
	cmd.Env = append(os.Environ(), signalChildEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Signal once the run has trained and evaluated (evals.csv has the
	// header, step 0 and a later step).
	run := filepath.Join(out, "select", "relu", "lr0.002", "seed1")
	evals := filepath.Join(run, "evals.csv")
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(evals); err == nil && strings.Count(string(b), "\n") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no evaluation in %s after a minute; stderr: %s", evals, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	t.Logf("exit: %v; stderr: %s", err, stderr.String())
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("exit status %d, stderr %q; want 1 and an error saying the run was cancelled", code, stderr.String())
	}
	f, err := safetensors.Load(filepath.Join(run, "checkpoint.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["step"] == "0" || f.Metadata["step"] == "" {
		t.Errorf("checkpoint at step %q, want the step the signal stopped", f.Metadata["step"])
	}
	if _, err := os.Stat(filepath.Join(run, "model.safetensors")); err != nil {
		t.Errorf("no model after the signal: %v", err)
	}
}
