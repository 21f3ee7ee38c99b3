package train_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	"gorgonia.org/tensor"
)

// The crash test re-executes this test binary as a child that trains in
// the directory named by crashDirEnv. The child prints crashReady once the
// binary has started, and kill moments count from then: a child's start-up
// (about 1 s under the race detector) varies too much to time kills from.
const (
	crashDirEnv  = "GELU_TRAIN_CRASH_DIR"
	crashSeedEnv = "GELU_TRAIN_CRASH_SEED" // overrides the default seed 1
	crashReady   = "crash-child-ready"
)

// crashConfig is the child's run: a float64 MLP with dropout on the tanh
// regression data, a checkpoint after every step, evaluations every 4
// steps and at each epoch end.
func crashConfig(dir string) train.Config {
	epochs := 12
	if raceEnabled {
		epochs = 8 // the race detector makes start-up and steps slower
	}
	return train.Config{Epochs: epochs, CheckpointEvery: 1, EvalEvery: 4, Dir: dir, Resume: true, Quiet: true}
}

// TestCrashAndResumeIsByteIdentical kills a training child with SIGKILL
// at seeded random moments, resuming each time, and checks that the files
// at the end are byte for byte those of an uninterrupted run: parameters,
// optimizer state, metrics and evaluations.
func TestCrashAndResumeIsByteIdentical(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		fmt.Println(crashReady)
		s := regression(t, tensor.Float64, regressionData(1))
		tr, err := train.New(s.model, s.opt, s.trainData, s.valData, crashConfig(dir))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts ~25 processes")
	}
	seed := uint64(1)
	if v := os.Getenv(crashSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, v, err)
		}
	}
	const kills = 20
	r := rand.New(rand.NewPCG(seed, 0x6e1c))

	// child runs the test binary as a child in dir, killing it killAfter
	// after it is ready (0: never); it reports whether the kill interrupted
	// it and how long it ran once ready.
	child := func(dir string, killAfter time.Duration) (killed bool, took time.Duration) {
		t.Helper()
		// Under an emulator (the arm64 run: go test -exec qemu-aarch64) the
		// test binary runs through the command GELU_TEST_EXEC names.
		argv := append(strings.Fields(os.Getenv("GELU_TEST_EXEC")), os.Args[0], "-test.run=^TestCrashAndResumeIsByteIdentical$", "-test.count=1")
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		out := &readyWriter{ready: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done: // failed before it was ready
			t.Fatalf("child in %s exited before it was ready: %v\n%s", dir, err, out.bytes())
		case <-out.ready:
		}
		start := time.Now()
		if killAfter > 0 {
			select {
			case err = <-done:
			case <-time.After(killAfter):
				cmd.Process.Kill() // SIGKILL: no deferred code, no flush
				err = <-done
				killed = true
			}
		} else {
			err = <-done
		}
		took = time.Since(start)
		var exit *exec.ExitError
		if err != nil && !(killed && errors.As(err, &exit)) {
			t.Fatalf("child in %s failed: %v\n%s", dir, err, out.bytes())
		}
		if err == nil {
			killed = false // it finished before the kill
		}
		return killed, took
	}

	stepIn := func(dir string) int {
		f, err := safetensors.Load(filepath.Join(dir, "checkpoint.safetensors"))
		if err != nil {
			return 0
		}
		n, _ := strconv.Atoi(f.Metadata["step"])
		return n
	}
	ref := t.TempDir()
	_, full := child(ref, 0)
	total := stepIn(ref)

	// Kill moments are uniform in [0, window) after the child is ready.
	// The window adapts so that the kills spread over the whole run: it
	// starts at an even share of the run time, grows (shrinks) when a kill
	// advanced the run much less (more) than an even share of the steps,
	// and shrinks when the child finished first. Early kills land while it
	// builds the model or resumes, which are crash points too.
	window := full / kills
	dir := t.TempDir()
	var interrupted int
	var at []string
	for range kills {
		before := stepIn(dir)
		killed, _ := child(dir, time.Duration(r.Float64()*float64(window)))
		after := stepIn(dir)
		switch {
		case !killed: // the kills should land inside the run
			at = append(at, fmt.Sprintf("%d(done)", after))
			window = window * 3 / 4
		default:
			interrupted++
			at = append(at, strconv.Itoa(after))
			if 2*(after-before)*kills < total {
				window = window * 4 / 3
			} else if (after-before)*kills > 2*total {
				window = window * 3 / 4
			}
		}
	}
	child(dir, 0)
	t.Logf("seed %d: uninterrupted run %v (%d steps); %d of %d kills interrupted a run; checkpoint step after each: %v",
		seed, full.Round(time.Millisecond), total, interrupted, kills, at)
	if interrupted < kills/2 {
		t.Errorf("only %d of %d kills interrupted a run: the timing no longer exercises crashes", interrupted, kills)
	}

	want, got := readAll(t, ref), readAll(t, dir)
	names := func(m map[string][]byte) []string {
		var n []string
		for k := range m {
			n = append(n, k)
		}
		slices.Sort(n)
		return n
	}
	if !slices.Equal(names(want), names(got)) {
		t.Errorf("files after the crashes %v, uninterrupted run %v", names(got), names(want))
	}
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s after %d kills differs from the uninterrupted run:\n%s\nvs\n%s", name, interrupted, head(got[name]), head(w))
		}
	}
}

// readyWriter collects a child's output and closes ready when crashReady
// appears in it.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	seen  bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && bytes.Contains(w.buf.Bytes(), []byte(crashReady)) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *readyWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.buf.Bytes()...)
}
