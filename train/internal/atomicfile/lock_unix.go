//go:build unix && !aix

package atomicfile

// Writers lock their temporaries with flock(2): the lock belongs to the open
// file, so it conflicts with any other open of the same file (in this
// process too), and the system drops it when the writer dies.

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// renameOpen: an open file can be renamed (and removed) here.
const renameOpen = true

// errBusy: another open file holds the lock.
var errBusy = errors.New("locked by another writer")

// lockWriter takes the lock of a new temporary f. It returns nil too when
// the file system offers no lock: the write goes ahead, and Cleanup, unable
// to take a lock either, leaves every temporary there.
func lockWriter(f *os.File) error {
	err := tryLock(f)
	if errors.Is(err, errBusy) {
		return err
	}
	return nil
}

func tryLock(f *os.File) error {
	var err error
	raw, cerr := f.SyscallConn()
	if cerr != nil {
		return cerr
	}
	cerr = raw.Control(func(fd uintptr) {
		for {
			err = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if err != unix.EINTR {
				break
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	if err == unix.EWOULDBLOCK {
		return errBusy
	}
	return err
}

// removeOrphan removes the temporary p if no writer holds its lock. It
// holds the lock itself while it removes p, so that a writer that has just
// created p and not yet locked it finds its file gone and makes another.
func removeOrphan(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		// Gone already, or not ours to open: nothing to do, or no way to
		// tell whether its writer lives.
		return nil
	}
	defer f.Close()
	if tryLock(f) != nil || !stillNamed(f) {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
