package dist

// What the launcher (mpirun, srun) tells each process through its
// environment: used to cross-check the MPI library's rank and size and to
// tell whether a program was started as part of a job at all.

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// Launch is a process's place in a job, as its launcher's environment
// variables give it.
type Launch struct {
	Rank, Size int
	// Source names the variables read, e.g.
	// "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE".
	Source string
}

// launchEnvs are the launchers' variables, in the order they are trusted:
// an mpirun inside a Slurm allocation sets both its own and Slurm's, and
// its own describe the job.
var launchEnvs = []struct{ rank, size string }{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, // Open MPI's mpirun
	{"PMI_RANK", "PMI_SIZE"},                         // MPICH's Hydra, Intel MPI
	// srun sets SLURM_STEP_NUM_TASKS in the tasks of a step; a batch
	// script itself has SLURM_PROCID=0 and SLURM_NTASKS but is one process.
	{"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"},
}

// FromEnv reads the launcher's variables: ok is false when no launcher
// set them (a program started by hand), err non-nil when they are
// malformed.
func FromEnv() (l Launch, ok bool, err error) {
	for _, e := range launchEnvs {
		rs, okR := os.LookupEnv(e.rank)
		ss, okS := os.LookupEnv(e.size)
		if !okR || !okS {
			continue
		}
		l.Source = e.rank + "/" + e.size
		r, err1 := strconv.Atoi(rs)
		s, err2 := strconv.Atoi(ss)
		if err1 != nil || err2 != nil || s < 1 || r < 0 || r >= s {
			return l, false, fmt.Errorf("dist: the launcher's %s=%q and %s=%q are not a rank 0 ≤ rank < size", e.rank, rs, e.size, ss)
		}
		l.Rank, l.Size = r, s
		return l, true, nil
	}
	return Launch{}, false, nil
}

// Launched reports whether the process was started by an MPI launcher
// as one of more than one process, the case in which a program should
// train distributed without being asked.
func Launched() bool {
	l, ok, err := FromEnv()
	return err == nil && ok && l.Size > 1
}

// Open returns the communicator a program trains on: the MPI job's (Init)
// when want is set, as a program's -dist flag sets it, or when the process
// was Launched as one of several; otherwise Single, a process alone. So
// `mpirun -np 4 prog` trains data-parallel without -dist, and `prog -dist`
// on a machine without Open MPI fails with the package to install.
func Open(want bool) (Comm, error) {
	if !want && !Launched() {
		return Single(), nil
	}
	m, err := Init()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Launcher returns the path of mpirun, the launcher of the MPI library
// Available finds, or an error saying what to install: the one answer
// programs and tests that start MPI jobs share.
func Launcher() (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	p, err := exec.LookPath("mpirun")
	if err != nil {
		return "", fmt.Errorf("dist: mpirun is not installed (%v); apt-get install openmpi-bin", err)
	}
	return p, nil
}
