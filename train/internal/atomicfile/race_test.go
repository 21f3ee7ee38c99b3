package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/geluproject/gelu/train/internal/testutil"
)

// The tests below start this test binary again as writer processes: with
// helperEnv set, TestMain runs the helper it names instead of the tests.
const helperEnv = "ATOMICFILE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "loop":
		os.Exit(helperLoop())
	case "hold":
		os.Exit(helperHold())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperLoop writes HELPER_PATH HELPER_N times with HELPER_TEXT.
func helperLoop() int {
	n, _ := strconv.Atoi(os.Getenv("HELPER_N"))
	for i := range n {
		if err := WriteFile(os.Getenv("HELPER_PATH"), writeString(os.Getenv("HELPER_TEXT"))); err != nil {
			fmt.Fprintf(os.Stderr, "write %d: %v\n", i, err)
			return 1
		}
	}
	return 0
}

// helperHold starts writing HELPER_PATH, says "ready" and then, for each
// line on stdin, commits ("commit") or waits to be killed.
func helperHold() int {
	f, err := Create(os.Getenv("HELPER_PATH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	io.WriteString(f, os.Getenv("HELPER_TEXT"))
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "commit" {
			if err := f.Commit(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		}
	}
	return 3
}

func helper(t *testing.T, kind, path, text string, n int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot start the test binary again: %v", err)
	}
	// Under an emulator (the arm64 run under qemu-user) the test binary
	// runs through the command GELU_TEST_EXEC names.
	argv := append(strings.Fields(os.Getenv("GELU_TEST_EXEC")), exe)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), helperEnv+"="+kind, "HELPER_PATH="+path, "HELPER_TEXT="+text, "HELPER_N="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

// Two processes writing the same file at the same moments, many times:
// each Create sweeps the file's orphaned temporaries, and must not take
// the other process's temporary, in flight, for one.
func TestConcurrentWritersInTwoProcesses(t *testing.T) {
	const writes = 400
	dir := t.TempDir()
	p := filepath.Join(dir, "report.md")
	a, b := helper(t, "loop", p, "from a", writes), helper(t, "loop", p, "from b", writes)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	errA, errB := a.Wait(), b.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("writers ended with %v and %v, want both to succeed", errA, errB)
	}
	if got, _ := os.ReadFile(p); string(got) != "from a" && string(got) != "from b" {
		t.Errorf("file holds %q, want one writer's whole text", got)
	}
	if got := testutil.ListDir(t, dir); !slices.Equal(got, []string{"report.md"}) {
		t.Errorf("directory holds %v, want only report.md", got)
	}
}

// The same within one process, from goroutines.
func TestConcurrentWritersInOneProcess(t *testing.T) {
	const writers, writes = 4, 200
	dir := t.TempDir()
	p := filepath.Join(dir, "report.md")
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for range writes {
				if err := WriteFile(p, writeString(fmt.Sprint("from ", w))); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", w, err)
		}
	}
	if got := testutil.ListDir(t, dir); !slices.Equal(got, []string{"report.md"}) {
		t.Errorf("directory holds %v, want only report.md", got)
	}
}

// A temporary whose writer is alive in another process stays; once the
// writer is killed, the next Cleanup removes it.
func TestCleanupSparesLiveWritersOnly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.safetensors")
	start := func() (*exec.Cmd, io.WriteCloser) {
		cmd := helper(t, "hold", p, "held", 0)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			t.Fatalf("writer said %q (%v), want ready", line, err)
		}
		return cmd, in
	}
	temps := func() []string {
		var ts []string
		for _, n := range testutil.ListDir(t, dir) {
			if IsTemp("ckpt.safetensors", n) {
				ts = append(ts, n)
			}
		}
		return ts
	}

	live, in := start()
	if err := Cleanup(p); err != nil {
		t.Fatal(err)
	}
	if got := temps(); len(got) != 1 {
		t.Fatalf("with a live writer, Cleanup left %v, want its one temporary", got)
	}
	io.WriteString(in, "commit\n")
	if err := live.Wait(); err != nil {
		t.Fatalf("the writer could not commit after another process's Cleanup: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "held" {
		t.Errorf("file holds %q, want the writer's text", got)
	}

	dead, _ := start()
	if err := dead.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	dead.Wait()
	if got := temps(); len(got) != 1 {
		t.Fatalf("a killed writer left %v, want its one temporary", got)
	}
	if err := Cleanup(p); err != nil {
		t.Fatal(err)
	}
	if got := temps(); len(got) != 0 {
		t.Errorf("Cleanup left the killed writer's temporary %v", got)
	}
}
