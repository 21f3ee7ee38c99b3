package report

// Atomic file writes, shared with the training checkpoints through
// train/internal/atomicfile: the content goes to a temporary file in the
// target's directory, which is flushed, fsynced and renamed over the
// target, and the directory is fsynced so the rename itself survives a
// crash.

import (
	"fmt"
	"io"

	"github.com/geluproject/gelu/train/internal/atomicfile"
)

// errNil is the error of a method called on a nil value of a type that
// must come from its constructor.
func errNil(typ, constructor string) error {
	return fmt.Errorf("report: nil %s (use %s)", typ, constructor)
}

// WriteFileAtomic creates or replaces the file at path with what write
// writes, atomically: if write returns an error (or panics), or anything in
// between fails, path is left as it was and the temporary file is removed.
// Temporary files an earlier, killed write of path left behind are removed
// first. The new file has mode 0644.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	if err := atomicfile.WriteFile(path, write); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// AtomicFile is a file being written that appears at its path only when
// Commit succeeds. Until then it lives as a hidden temporary file
// (".name.tmp-*") in the same directory. Call Abort to discard it.
type AtomicFile struct{ f *atomicfile.File }

// CreateAtomic starts writing the file at path. The directory must exist.
// Temporary files an earlier, killed write of path left behind are removed.
func CreateAtomic(path string) (*AtomicFile, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &AtomicFile{f}, nil
}

// Path returns the final path of the file.
func (a *AtomicFile) Path() string {
	if a == nil {
		return ""
	}
	return a.f.Path()
}

// Write buffers p for the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	if a == nil {
		return 0, errNil("AtomicFile", "report.CreateAtomic")
	}
	n, err := a.f.Write(p)
	if err != nil {
		err = fmt.Errorf("report: %w", err)
	}
	return n, err
}

// Commit flushes, fsyncs and renames the temporary file to the final path.
// On failure the temporary file is removed and the old file, if any, stays.
func (a *AtomicFile) Commit() error {
	if a == nil {
		return errNil("AtomicFile", "report.CreateAtomic")
	}
	if err := a.f.Commit(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// Abort discards the temporary file. It is a no-op after Commit.
func (a *AtomicFile) Abort() error {
	if a == nil {
		return nil
	}
	return a.f.Abort()
}
