package report

// The atomic-write behaviour (replace, keep the old file on failure, no
// temporary left behind, crash safety) is tested in train/internal/atomicfile;
// these tests check that the exported wrappers reach it and mark their
// errors as report's.

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/internal/testutil"
)

func TestWriteFileAtomicWrapsAtomicfile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.bin")
	if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk on fire")
	err := WriteFileAtomic(p, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "report: ") || !strings.Contains(err.Error(), p) {
		t.Errorf("failed write: error %v, want report's error wrapping %v and naming %s", err, boom, p)
	}
	if got, _ := os.ReadFile(p); string(got) != "first" {
		t.Errorf("file holds %q after a failed write, want %q", got, "first")
	}
}

func TestAtomicFileWrapsAtomicfile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.csv")
	f, err := CreateAtomic(p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != p {
		t.Errorf("Path() = %q, want %q", f.Path(), p)
	}
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateAtomic(filepath.Join(dir, "missing", "x")); err == nil || !strings.HasPrefix(err.Error(), "report: ") {
		t.Errorf("missing directory: error %v, want report's error", err)
	}
	testutil.CheckCommitAndAbort(t, dir, func(p string) (testutil.Committer, error) { return CreateAtomic(p) }, "report: ")
}
