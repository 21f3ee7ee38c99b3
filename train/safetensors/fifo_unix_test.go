//go:build unix

package safetensors

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO is refused without opening it: opening one for reading blocks
// until a writer appears.
func TestLoadRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo.safetensors")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("got %v, want a not-a-regular-file error", err)
	}
}
