//go:build !unix

package mpirun

import "os/exec"

// ownGroup: without Unix process groups (Open MPI's mpirun is Unix-only
// anyway) the context's end kills mpirun alone.
func ownGroup(cmd *exec.Cmd) {}

// killGroup ends mpirun.
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
