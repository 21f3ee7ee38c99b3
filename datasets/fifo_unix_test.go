//go:build unix

package datasets_test

import (
	"path/filepath"
	"syscall"
	"testing"
)

func makeFIFO(t *testing.T, dir string) (string, bool) {
	p := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Logf("no FIFO: %v", err)
		return "", false
	}
	return p, true
}
