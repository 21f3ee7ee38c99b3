package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/internal/testutil"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func TestWriteFileReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.bin")
	for _, content := range []string{"first version", "second"} {
		if err := WriteFile(p, writeString(content)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != content {
			t.Errorf("file holds %q, want %q", got, content)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm()&^0o022 != Mode&^0o022 {
		t.Errorf("mode %v, want %v less the umask", st.Mode().Perm(), Mode)
	}
	if got := testutil.ListDir(t, dir); !slices.Equal(got, []string{"ckpt.bin"}) {
		t.Errorf("directory holds %v, want only ckpt.bin", got)
	}
}

func TestWriteFileKeepsOldFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.bin")
	os.WriteFile(p, []byte("good"), 0o644)
	boom := errors.New("disk on fire")
	for name, write := range map[string]func(io.Writer) error{
		"error": func(w io.Writer) error { io.WriteString(w, "half"); return boom },
		"panic": func(w io.Writer) error { io.WriteString(w, "half"); panic("oops") },
		"nil":   nil,
	} {
		err := WriteFile(p, write)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s", name, err, p)
		}
		if got, _ := os.ReadFile(p); string(got) != "good" {
			t.Errorf("%s: file holds %q after a failed write, want the old content", name, got)
		}
		if got := testutil.ListDir(t, dir); len(got) != 1 {
			t.Errorf("%s: directory holds %v, want no temporary file left", name, got)
		}
	}
	if err := WriteFile(p, func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("error %v does not wrap the write's error", err)
	}
}

// Renaming a file over a directory fails; the temporary file must go.
func TestWriteFileBadPaths(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "missing", "x"), writeString("")); err == nil {
		t.Error("missing directory: no error")
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := WriteFile(filepath.Join(dir, "sub"), writeString("")); err == nil {
		t.Error("path is a directory: no error")
	}
	if err := WriteFile(dir+"/", writeString("")); err == nil {
		t.Error("path without a file name: no error")
	}
	if got := testutil.ListDir(t, dir); !slices.Equal(got, []string{"sub"}) {
		t.Errorf("directory holds %v, want only sub", got)
	}
}

func TestFileAppearsOnlyOnCommit(t *testing.T) {
	testutil.CheckCommitAndAbort(t, t.TempDir(), func(p string) (testutil.Committer, error) { return Create(p) }, "")
}

// Orphans of a killed writer are removed by the next write of the same
// path; look-alikes of other targets and non-digit suffixes stay.
func TestCleanupRemovesOnlyOwnOrphans(t *testing.T) {
	dir := t.TempDir()
	orphans := []string{".ckpt.safetensors.tmp-123", ".ckpt.safetensors.tmp4567"}
	others := []string{".ckpt.safetensors.tmp.tmp-1", ".ckpt.safetensors.tmp-", ".ckpt.safetensors.tmp-12x",
		".other.tmp-1", "ckpt.safetensors.tmp-1", ".ckpt.safetensors"}
	for _, n := range append(append([]string{}, orphans...), others...) {
		os.WriteFile(filepath.Join(dir, n), []byte("junk"), 0o644)
	}
	os.Mkdir(filepath.Join(dir, ".ckpt.safetensors.tmp-99"), 0o755) // not a file: left alone
	if err := WriteFile(filepath.Join(dir, "ckpt.safetensors"), writeString("new")); err != nil {
		t.Fatal(err)
	}
	want := append(append([]string{}, others...), ".ckpt.safetensors.tmp-99", "ckpt.safetensors")
	slices.Sort(want)
	if got := testutil.ListDir(t, dir); !slices.Equal(got, want) {
		t.Errorf("after the write the directory holds\n%v\nwant\n%v", got, want)
	}
	if err := Cleanup(filepath.Join(dir, "nowhere", "x")); err != nil {
		t.Errorf("missing directory: %v", err)
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".a.tmp-1": true, ".a.tmp123": true, ".a.tmp-": false, ".a.tmp": false,
		".a.tmp.tmp-1": false, ".ab.tmp-1": false, "a.tmp-1": false,
	} {
		if got := IsTemp("a", name); got != want {
			t.Errorf("IsTemp(a, %q) = %v, want %v", name, got, want)
		}
	}
}

// Create sweeps too, so streaming writers (report's CSV files) also tidy
// up after a crash.
func TestCreateRemovesOrphans(t *testing.T) {
	dir := t.TempDir()
	orphan := filepath.Join(dir, ".m.csv.tmp-31")
	os.WriteFile(orphan, []byte("junk"), 0o644)
	f, err := Create(filepath.Join(dir, "m.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := os.Stat(orphan); err == nil {
		t.Error("Create left an orphaned temporary file")
	}
}
