package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// tmpInfix joins the target's name and os.CreateTemp's random digits.
const tmpInfix = ".tmp"

// Mode is the permission of every file written (before the umask).
const Mode os.FileMode = 0o644

// File is a file being written that appears at its path only when Commit
// succeeds. Until then it is a hidden temporary file in the same directory.
// Call Abort to discard it.
type File struct {
	path string
	f    *os.File
	w    *bufio.Writer
	done bool
}

// Create starts writing the file at path. The directory must exist.
// Orphaned temporary files of path from an earlier crash are removed first;
// the temporaries of writers still alive are not (see Cleanup).
func Create(path string) (*File, error) {
	dir, base := split(path)
	if base == "" {
		return nil, fmt.Errorf("cannot write %q: no file name", path)
	}
	if err := Cleanup(path); err != nil {
		return nil, err
	}
	// Another process's Cleanup may take the new temporary for an orphan in
	// the moment before it is locked; then it is gone, and a new one is made.
	for range 100 {
		f, err := os.CreateTemp(dir, "."+base+tmpInfix+"-*")
		if err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", path, err)
		}
		live.add(f.Name())
		if lockWriter(f) == nil && stillNamed(f) {
			return &File{path: path, f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
		}
		live.remove(f.Name())
		f.Close()
	}
	return nil, fmt.Errorf("cannot write %s: every temporary file made for it was removed at once by another process", path)
}

// stillNamed reports whether f's name still leads to f.
func stillNamed(f *os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	named, err := os.Lstat(f.Name())
	return err == nil && os.SameFile(st, named)
}

func split(path string) (dir, base string) {
	dir, base = filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return dir, base
}

// Path returns the final path of the file.
func (a *File) Path() string { return a.path }

// Write buffers p for the temporary file.
func (a *File) Write(p []byte) (int, error) {
	if a.done {
		return 0, fmt.Errorf("write to %s after Commit or Abort", a.path)
	}
	return a.w.Write(p)
}

// Commit flushes, fsyncs and renames the temporary file to the final path.
// On failure the temporary file is removed and the old file, if any, stays.
func (a *File) Commit() error {
	if a.done {
		return fmt.Errorf("%s already committed or aborted", a.path)
	}
	a.done = true
	tmp := a.f.Name()
	defer live.remove(tmp)
	err := a.w.Flush()
	if err == nil {
		err = a.f.Chmod(Mode)
	}
	if err == nil {
		err = a.f.Sync()
	}
	// The writer's lock lasts until the file is closed: where an open file
	// can be renamed, it is renamed first, so that no Cleanup can take it
	// for an orphan in between.
	if err == nil && renameOpen {
		err = os.Rename(tmp, a.path)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && !renameOpen {
		err = os.Rename(tmp, a.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	syncDir(filepath.Dir(a.path))
	return nil
}

// Abort discards the temporary file. It is a no-op after Commit.
func (a *File) Abort() error {
	if a.done {
		return nil
	}
	a.done = true
	name := a.f.Name()
	defer live.remove(name)
	if renameOpen { // remove while the lock is held, as Commit renames
		err := os.Remove(name)
		return errors.Join(a.f.Close(), err)
	}
	return errors.Join(a.f.Close(), os.Remove(name))
}

// WriteFile creates or replaces the file at path with what write writes,
// atomically: if write returns an error (or panics), or anything in
// between fails, path is left as it was and the temporary file is removed.
// Orphaned temporary files of path from an earlier crash are removed first.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	if write == nil {
		return fmt.Errorf("writing %s: write is nil", path)
	}
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("writing %s: write panicked: %v", path, r)
		}
		if err != nil {
			f.Abort()
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// Cleanup removes the temporary files that an interrupted write of path
// left behind: ".name.tmp" followed by digits, optionally after a dash (the
// older safetensors writer used no dash). A temporary that a live writer
// holds, in this process or another (on this machine or, on a shared file
// system with locks, on another), is left alone: every writer holds a lock
// on its temporary file until it is committed or aborted, and the system
// releases the lock of a writer that dies. Where that cannot be told (a
// file system without locks), the temporary is left too. A missing
// directory is not an error: there is nothing to clean.
func Cleanup(path string) error {
	dir, base := split(path)
	if base == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cleaning temporary files of %s: %w", path, err)
	}
	var errs []error
	for _, e := range entries {
		if !IsTemp(base, e.Name()) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if live.has(p) {
			continue
		}
		if err := removeOrphan(p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleaning temporary files of %s: %w", path, err)
	}
	return nil
}

// writers is the set of temporaries this process is writing, by name: a
// lock taken again by the process that holds it may not conflict (file
// systems that emulate whole-file locks with POSIX record locks, as NFS
// does, grant it), so Cleanup does not ask the lock about its own.
type writers struct {
	mu    sync.Mutex
	names map[string]bool
}

var live = writers{names: map[string]bool{}}

func (w *writers) add(name string) {
	w.mu.Lock()
	w.names[filepath.Clean(name)] = true
	w.mu.Unlock()
}

func (w *writers) remove(name string) {
	w.mu.Lock()
	delete(w.names, filepath.Clean(name))
	w.mu.Unlock()
}

func (w *writers) has(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.names[filepath.Clean(name)]
}

// IsTemp reports whether name is a temporary file of a target named base.
// The random part must be all digits, so that the temporaries of a target
// named "x.tmp" (".x.tmp.tmp-123") are not mistaken for those of "x".
func IsTemp(base, name string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+tmpInfix)
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "-")
	if rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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
