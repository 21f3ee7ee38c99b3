package testutil

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ListDir returns the names in dir, in directory order as os.ReadDir sorts
// them (by name), to catch leftover temporary files. A read error fails t.
func ListDir(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// Committer is a file written in full before it appears: atomicfile.File
// and report.AtomicFile.
type Committer interface {
	io.Writer
	Commit() error
	Abort() error
}

// CheckCommitAndAbort checks a Committer's life in the empty directory dir:
// a file made by create is invisible until Commit, holds what was written
// after it, refuses a Write and a second Commit with an error starting
// with errPrefix, and one aborted instead leaves nothing behind.
func CheckCommitAndAbort(t testing.TB, dir string, create func(path string) (Committer, error), errPrefix string) {
	t.Helper()
	p := filepath.Join(dir, "metrics.csv")
	f, err := create(p)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "step,loss\n")
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("file visible before Commit (stat error %v)", err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "step,loss\n" {
		t.Errorf("file holds %q", got)
	}
	if _, err := f.Write([]byte("x")); err == nil || !strings.HasPrefix(err.Error(), errPrefix) {
		t.Errorf("Write after Commit: error %v, want one starting with %q", err, errPrefix)
	}
	if err := f.Commit(); err == nil || !strings.HasPrefix(err.Error(), errPrefix) {
		t.Errorf("second Commit: error %v, want one starting with %q", err, errPrefix)
	}
	g, err := create(filepath.Join(dir, "gone.csv"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(g, "x")
	if err := g.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := ListDir(t, dir); !slices.Equal(got, []string{"metrics.csv"}) {
		t.Errorf("directory holds %v after Abort, want only metrics.csv", got)
	}
}
