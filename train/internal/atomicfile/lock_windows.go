//go:build windows

package atomicfile

// Go opens files on Windows without FILE_SHARE_DELETE, so while a writer
// has its temporary open no other open of it (in any process) can delete
// or rename it: the open handle is the writer's lock, and the system
// closes it when the writer dies.

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// renameOpen: a file open without FILE_SHARE_DELETE cannot be renamed, so
// Commit closes it first. In the moment between the two a Cleanup can
// still remove it; on Windows, two processes writing the same path at the
// same moment can therefore still fail.
const renameOpen = false

// lockWriter has nothing to do: the open handle is the lock.
func lockWriter(*os.File) error { return nil }

// removeOrphan removes the temporary p unless a live writer holds it open.
func removeOrphan(p string) error {
	err := os.Remove(p)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist),
		errors.Is(err, windows.ERROR_SHARING_VIOLATION), errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return nil
	}
	return err
}
