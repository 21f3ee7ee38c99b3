package train_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	"gorgonia.org/tensor"
)

// The crash test re-executes this test binary as a child that trains in
// the directory named by crashDirEnv; crashModeEnv "setup" makes the child
// stop before training, to measure its start-up time.
const (
	crashDirEnv  = "GELU_TRAIN_CRASH_DIR"
	crashModeEnv = "GELU_TRAIN_CRASH_MODE"
	crashSeedEnv = "GELU_TRAIN_CRASH_SEED" // overrides the default seed 1
)

// crashConfig is the child's run: a float64 MLP with dropout on the tanh
// regression data, a checkpoint after every step, evaluations every 4
// steps and at each epoch end.
func crashConfig(dir string) train.Config {
	epochs := 12
	if raceEnabled {
		epochs = 3 // the race detector makes every step ~10 times slower
	}
	return train.Config{Epochs: epochs, CheckpointEvery: 1, EvalEvery: 4, Dir: dir, Resume: true, Quiet: true}
}

// TestCrashAndResumeIsByteIdentical kills a training child with SIGKILL
// at seeded random moments, resuming each time, and checks that the files
// at the end are byte for byte those of an uninterrupted run: parameters,
// optimizer state, metrics and evaluations.
func TestCrashAndResumeIsByteIdentical(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		s := regression(t, tensor.Float64, regressionData(1))
		tr, err := train.New(s.model, s.opt, s.trainData, s.valData, crashConfig(dir))
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv(crashModeEnv) == "setup" {
			return
		}
		if _, err := tr.Run(); err != nil {
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

	// child runs the test binary as a child in dir, killing it after
	// killAfter (0: never); it reports whether the kill interrupted it.
	child := func(dir, mode string, killAfter time.Duration) (killed bool, took time.Duration) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashAndResumeIsByteIdentical$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashModeEnv+"="+mode)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
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
			t.Fatalf("child in %s failed: %v\n%s", dir, err, out.Bytes())
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
	_, setup := child(t.TempDir(), "setup", 0)
	_, full := child(ref, "", 0)
	total := stepIn(ref)

	// Kill moments are uniform in [0, window). The window adapts so that
	// the kills spread over the whole run: it starts at an even share of
	// the run time and grows (shrinks) when a kill advanced the run much
	// less (more) than an even share of the steps. Kills early in the
	// window land in start-up and resuming, which are crash points too.
	window := setup + full/kills
	dir := t.TempDir()
	var interrupted int
	var at []string
	for range kills {
		before := stepIn(dir)
		killed, _ := child(dir, "", time.Duration(r.Float64()*float64(window)))
		after := stepIn(dir)
		switch {
		case !killed:
			at = append(at, fmt.Sprintf("%d(done)", after))
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
	child(dir, "", 0)
	t.Logf("seed %d: start-up %v, uninterrupted run %v (%d steps); %d of %d kills interrupted a run; checkpoint step after each: %v",
		seed, setup.Round(time.Millisecond), full.Round(time.Millisecond), total, interrupted, kills, at)
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
