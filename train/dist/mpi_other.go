//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package dist

import (
	"errors"
	"fmt"
	"runtime"
)

// MPI is the world communicator of an MPI job. On this platform MPI cannot
// be loaded and Init always fails.
type MPI struct{ single }

// Available reports that MPI cannot be loaded on this platform.
func Available() error {
	return fmt.Errorf("dist: MPI is not available: run-time loading of libmpi is not supported on %s/%s", runtime.GOOS, runtime.GOARCH)
}

// Init fails: see Available.
func Init() (*MPI, error) { return nil, errors.Join(Available()) }

// Library returns "".
func (*MPI) Library() string { return "" }
