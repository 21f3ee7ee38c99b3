package report

// Atomic file writes: the content goes to a temporary file in the target's
// directory, which is flushed, fsynced and renamed over the target, and the
// directory is fsynced so the rename itself survives a crash. Used for every
// report file and for training checkpoints.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic creates or replaces the file at path with what write
// writes, atomically: if write returns an error (or panics), or anything in
// between fails, path is left as it was and the temporary file is removed.
// The new file has mode 0644.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	if write == nil {
		return fmt.Errorf("report.WriteFileAtomic %s: write is nil", path)
	}
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("report.WriteFileAtomic %s: write panicked: %v", path, r)
		}
		if err != nil {
			f.Abort()
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("report.WriteFileAtomic %s: %w", path, err)
	}
	return f.Commit()
}

// AtomicFile is a file being written that appears at its path only when
// Commit succeeds. Until then it lives as a hidden temporary file
// (".name.tmp-*") in the same directory. Call Abort to discard it.
type AtomicFile struct {
	path string
	f    *os.File
	w    *bufio.Writer
	done bool
}

// CreateAtomic starts writing the file at path. The directory must exist.
func CreateAtomic(path string) (*AtomicFile, error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return nil, fmt.Errorf("report: cannot write %q: no file name", path)
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("report: cannot write %s: %w", path, err)
	}
	return &AtomicFile{path: path, f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
}

// Path returns the final path of the file.
func (a *AtomicFile) Path() string { return a.path }

// Write buffers p for the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	if a.done {
		return 0, fmt.Errorf("report: write to %s after Commit or Abort", a.path)
	}
	return a.w.Write(p)
}

// Commit flushes, fsyncs and renames the temporary file to the final path.
// On failure the temporary file is removed and the old file, if any, stays.
func (a *AtomicFile) Commit() error {
	if a.done {
		return fmt.Errorf("report: %s already committed or aborted", a.path)
	}
	a.done = true
	tmp := a.f.Name()
	err := a.w.Flush()
	if err == nil {
		err = a.f.Chmod(0o644)
	}
	if err == nil {
		err = a.f.Sync()
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, a.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report: writing %s: %w", a.path, err)
	}
	syncDir(filepath.Dir(a.path))
	return nil
}

// Abort discards the temporary file. It is a no-op after Commit.
func (a *AtomicFile) Abort() error {
	if a.done {
		return nil
	}
	a.done = true
	return errors.Join(a.f.Close(), os.Remove(a.f.Name()))
}

// syncDir makes a rename in dir durable, as far as the file system allows:
// some cannot sync a directory, and the rename has happened either way, so
// failures here are not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
