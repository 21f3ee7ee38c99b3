//go:build !(unix && !aix) && !windows

package atomicfile

// Systems without a whole-file lock (or without one this package uses):
// Cleanup cannot tell an orphan from a live writer's temporary in another
// process, so it leaves them all.

import "os"

const renameOpen = false

func lockWriter(*os.File) error { return nil }

func removeOrphan(string) error { return nil }
