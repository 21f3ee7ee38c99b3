package report

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listDir returns the names in dir, to catch leftover temporary files.
func listDir(t *testing.T, dir string) []string {
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

func TestWriteFileAtomicReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.bin")
	for _, content := range []string{"first version", "second"} {
		if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := io.WriteString(w, content); return err }); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != content {
			t.Errorf("file holds %q, want %q", got, content)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only ckpt.bin", names)
	}
}

func TestWriteFileAtomicKeepsOldFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.bin")
	os.WriteFile(p, []byte("good"), 0o644)
	boom := errors.New("disk on fire")
	for name, write := range map[string]func(io.Writer) error{
		"error": func(w io.Writer) error { io.WriteString(w, "half"); return boom },
		"panic": func(w io.Writer) error { io.WriteString(w, "half"); panic("oops") },
	} {
		err := WriteFileAtomic(p, write)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s", name, err, p)
		}
		if got, _ := os.ReadFile(p); string(got) != "good" {
			t.Errorf("%s: file holds %q after a failed write, want the old content", name, got)
		}
		if names := listDir(t, dir); len(names) != 1 {
			t.Errorf("%s: directory holds %v, want no temporary file left", name, names)
		}
	}
	if err := WriteFileAtomic(p, nil); err == nil {
		t.Error("nil write: no error")
	}
}

func TestWriteFileAtomicBadPaths(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), func(io.Writer) error { return nil }); err == nil {
		t.Error("missing directory: no error")
	}
	// Renaming a file over a directory fails; the temporary file must go.
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := WriteFileAtomic(filepath.Join(dir, "sub"), func(io.Writer) error { return nil }); err == nil {
		t.Error("path is a directory: no error")
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only sub", names)
	}
}

func TestAtomicFileAppearsOnlyOnCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "metrics.csv")
	f, err := CreateAtomic(p)
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
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("Write after Commit: no error")
	}
	if err := f.Commit(); err == nil {
		t.Error("second Commit: no error")
	}
	g, _ := CreateAtomic(filepath.Join(dir, "gone.csv"))
	io.WriteString(g, "x")
	if err := g.Abort(); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v after Abort, want only metrics.csv", names)
	}
}
