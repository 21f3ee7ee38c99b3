package dist

import (
	"os"
	"strings"
	"testing"
)

// clearLaunchEnv unsets every launcher variable for the test.
func clearLaunchEnv(t *testing.T) {
	for _, e := range launchEnvs {
		for _, v := range []string{e.rank, e.size} {
			t.Setenv(v, "") // restored after the test
			os.Unsetenv(v)
		}
	}
}

func TestFromEnv(t *testing.T) {
	if testWorld != nil {
		t.Skip("inside an mpirun job the launcher's variables are real")
	}
	clearLaunchEnv(t)
	if _, ok, err := FromEnv(); ok || err != nil {
		t.Fatalf("no variables: ok %v, err %v", ok, err)
	}
	if Launched() {
		t.Fatal("Launched without a launcher")
	}
	// A batch script: Slurm's variables without a step of several tasks.
	t.Setenv("SLURM_PROCID", "0")
	t.Setenv("SLURM_NTASKS", "4")
	if _, ok, _ := FromEnv(); ok {
		t.Fatal("a Slurm batch script read as a task of a step")
	}
	t.Setenv("SLURM_STEP_NUM_TASKS", "4")
	t.Setenv("SLURM_PROCID", "3")
	if l, ok, err := FromEnv(); !ok || err != nil || l.Rank != 3 || l.Size != 4 || !strings.HasPrefix(l.Source, "SLURM_PROCID") {
		t.Fatalf("srun: %+v %v %v", l, ok, err)
	}
	// mpirun's own variables win over the allocation's.
	t.Setenv("OMPI_COMM_WORLD_RANK", "1")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	if l, ok, err := FromEnv(); !ok || err != nil || l.Rank != 1 || l.Size != 2 || !Launched() {
		t.Fatalf("mpirun in an allocation: %+v %v %v", l, ok, err)
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", "2")
	if _, _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), `OMPI_COMM_WORLD_RANK="2"`) {
		t.Fatalf("rank 2 of 2: %v", err)
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", "x")
	if _, _, err := FromEnv(); err == nil {
		t.Fatal("rank x accepted")
	}
}
