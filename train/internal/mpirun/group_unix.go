//go:build unix

package mpirun

import (
	"os/exec"
	"syscall"
)

// ownGroup gives mpirun and the ranks a process group of their own, so
// that a hung job is ended whole: SIGTERM to the group when the context
// ends (mpirun forwards it to its ranks), SIGKILL (killGroup) if that is
// not enough.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}

// killGroup ends what is left of the job's process group.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
