package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/dist"
	"github.com/geluproject/gelu/train/experiment"
	"gopkg.in/yaml.v3"
)

// k8sObject is the part of a Kubernetes object cluster/job.yaml uses.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct{ Name string }
	Spec       struct {
		AccessModes    []string `yaml:"accessModes"` // PersistentVolumeClaim
		CompletionMode string   `yaml:"completionMode"`
		Completions    int      `yaml:"completions"`
		Parallelism    int      `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Image   string
					Command []string
					Args    []string
					Env     []struct{ Name, Value string }
					Mounts  []struct {
						Name      string
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
					Resources struct {
						Requests map[string]string
					}
				}
				Volumes []struct {
					Name string
					PVC  *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				}
			}
		}
	}
}

// parseIn parses args as a worker whose environment is env.
func parseIn(args []string, env map[string]string) (config, error) {
	fs := flag.NewFlagSet("gelu-vs-relu", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return parseFlags(fs, args, func(k string) string { return env[k] })
}

// The shipped Indexed Job, read as Kubernetes would and its pods' arguments
// parsed as the program does: pod i of n is shard i/n of the paper's grid,
// every pod writes into the shared volume, and none would be refused.
func TestKubernetesManifest(t *testing.T) {
	raw, err := os.ReadFile("cluster/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]k8sObject{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var o k8sObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("job.yaml: %v", err)
		}
		objs[o.Kind] = o
	}
	pvc, job := objs["PersistentVolumeClaim"], objs["Job"]
	if len(objs) != 2 || job.APIVersion != "batch/v1" || pvc.APIVersion != "v1" {
		t.Fatalf("job.yaml holds %d objects (Job %q, PVC %q), want a batch/v1 Job and a v1 PersistentVolumeClaim", len(objs), job.APIVersion, pvc.APIVersion)
	}
	if !slices.Contains(pvc.Spec.AccessModes, "ReadWriteMany") {
		t.Errorf("the volume's access modes %v: pods on several nodes need ReadWriteMany", pvc.Spec.AccessModes)
	}
	s, n := job.Spec, job.Spec.Completions
	if s.CompletionMode != "Indexed" || n < 2 || s.Parallelism < 1 || s.Parallelism > n {
		t.Errorf("completionMode %q, completions %d, parallelism %d: want an Indexed Job of several completions", s.CompletionMode, n, s.Parallelism)
	}
	if rp := s.Template.Spec.RestartPolicy; rp != "Never" && rp != "OnFailure" {
		t.Errorf("restartPolicy %q: a Job needs Never or OnFailure", rp)
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(s.Template.Spec.Containers))
	}
	ctr := s.Template.Spec.Containers[0]
	if len(ctr.Command) > 0 {
		t.Errorf("the container sets command %q: the image's entry point is the program, args are its flags", ctr.Command)
	}
	docker, err := os.ReadFile("cluster/Dockerfile")
	if err != nil || !strings.Contains(string(docker), `ENTRYPOINT ["/gelu-vs-relu"]`) {
		t.Errorf("cluster/Dockerfile does not make the program the entry point (%v)", err)
	}

	// The mounted volume is the claim.
	var mount string
	for _, m := range ctr.Mounts {
		for _, v := range s.Template.Spec.Volumes {
			if v.Name == m.Name && v.PVC != nil && v.PVC.ClaimName == pvc.Metadata.Name {
				mount = m.MountPath
			}
		}
	}
	if mount == "" {
		t.Fatalf("no volume of claim %q is mounted", pvc.Metadata.Name)
	}
	env := map[string]string{}
	for _, e := range ctr.Env {
		env[e.Name] = e.Value
	}
	if env[experiment.ShardCountEnv] != strconv.Itoa(n) {
		t.Errorf("%s=%q, want the completions, %d", experiment.ShardCountEnv, env[experiment.ShardCountEnv], n)
	}
	for i := range n {
		env[experiment.JobIndex] = strconv.Itoa(i)
		c, err := parseIn(ctr.Args, env)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if err := c.validate(); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if c.Part != (experiment.Shard{Index: i, Count: n}) {
			t.Errorf("pod %d is shard %v, want %d/%d", i, c.Part, i, n)
		}
		if rel, err := filepath.Rel(mount, c.Out); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("pod %d writes to %s, outside the shared volume at %s", i, c.Out, mount)
		}
		if c.Epochs != 50 || c.Seeds != 5 || gridRuns(c) != 50 || n > gridRuns(c) {
			t.Errorf("pod %d: %d epochs × %d seeds, %d runs for %d shards; want the paper's grid, 50 runs of 50 epochs", i, c.Epochs, c.Seeds, gridRuns(c), n)
		}
		if cpu, _ := strconv.Atoi(ctr.Resources.Requests["cpu"]); c.Workers > cpu {
			t.Errorf("pod %d trains %d runs at once on %d requested CPUs", i, c.Workers, cpu)
		}
	}
}

// The sbatch script's array is a contiguous range of at most as many tasks
// as the paper's grid has runs (its runs are tested on a real Slurm by
// .ci/slurm-test.sh).
func TestSbatchArray(t *testing.T) {
	raw, err := os.ReadFile("cluster/gelu-vs-relu.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#SBATCH --array=(\d+)-(\d+)$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("no #SBATCH --array=a-b line")
	}
	lo, _ := strconv.Atoi(m[1])
	hi, _ := strconv.Atoi(m[2])
	c, err := parseIn([]string{"-full"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tasks := hi - lo + 1; tasks < 2 || tasks > gridRuns(c) {
		t.Errorf("--array=%d-%d: %d tasks for %d runs", lo, hi, tasks, gridRuns(c))
	}
	if !strings.Contains(string(raw), `-full -out "${GELU_OUT:-out/gelu-vs-relu}"`) {
		t.Error("the script does not run the paper's grid (-full) into $GELU_OUT")
	}
}

// container is the part of a pod's container mpijob.yaml uses.
type container struct {
	Name    string
	Image   string
	Command []string
	Args    []string
	Mounts  []struct {
		Name      string
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// mpiObject is the part of a PersistentVolumeClaim or an MPI Operator
// MPIJob that cluster/mpijob.yaml uses.
type mpiObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct{ Name string }
	Spec       struct {
		AccessModes       []string `yaml:"accessModes"`
		SlotsPerWorker    int      `yaml:"slotsPerWorker"`
		MPIImplementation string   `yaml:"mpiImplementation"`
		SSHAuthMountPath  string   `yaml:"sshAuthMountPath"`
		ReplicaSpecs      map[string]struct {
			Replicas int
			Template struct {
				Spec struct {
					Containers []container
					Volumes    []struct {
						Name string
						PVC  *struct {
							ClaimName string `yaml:"claimName"`
						} `yaml:"persistentVolumeClaim"`
					}
				}
			}
		} `yaml:"mpiReplicaSpecs"`
	}
}

// The shipped MPIJob, read as Kubernetes would: mpirun in the launcher
// starts one rank per worker slot, and each rank, given the launcher's
// arguments and the environment mpirun sets, trains the same single run
// data-parallel (no -dist needed), with its share of every batch, into
// the volume every worker mounts.
func TestMPIJobManifest(t *testing.T) {
	raw, err := os.ReadFile("cluster/mpijob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]mpiObject{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var o mpiObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("mpijob.yaml: %v", err)
		}
		objs[o.Kind] = o
	}
	pvc, job := objs["PersistentVolumeClaim"], objs["MPIJob"]
	if len(objs) != 2 || job.APIVersion != "kubeflow.org/v2beta1" || pvc.APIVersion != "v1" {
		t.Fatalf("mpijob.yaml holds %d objects (MPIJob %q, PVC %q), want a kubeflow.org/v2beta1 MPIJob and a v1 PersistentVolumeClaim", len(objs), job.APIVersion, pvc.APIVersion)
	}
	if !slices.Contains(pvc.Spec.AccessModes, "ReadWriteMany") {
		t.Errorf("the volume's access modes %v: pods on several nodes need ReadWriteMany", pvc.Spec.AccessModes)
	}
	s := job.Spec
	if s.MPIImplementation != "OpenMPI" || s.SlotsPerWorker < 1 || s.SSHAuthMountPath != "/root/.ssh" {
		t.Errorf("mpiImplementation %q, slotsPerWorker %d, sshAuthMountPath %q: want OpenMPI (the library package dist loads), at least one slot, and root's .ssh (the image runs as root)",
			s.MPIImplementation, s.SlotsPerWorker, s.SSHAuthMountPath)
	}
	launcher, worker := s.ReplicaSpecs["Launcher"], s.ReplicaSpecs["Worker"]
	if len(s.ReplicaSpecs) != 2 || launcher.Replicas != 1 || worker.Replicas < 2 {
		t.Fatalf("replica specs %v: want one Launcher and several Workers", s.ReplicaSpecs)
	}
	if len(launcher.Template.Spec.Containers) != 1 || len(worker.Template.Spec.Containers) != 1 {
		t.Fatal("want one container in the launcher and one in each worker")
	}
	lc, wc := launcher.Template.Spec.Containers[0], worker.Template.Spec.Containers[0]
	docker, err := os.ReadFile("cluster/Dockerfile.mpi")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FROM gelu-vs-relu:latest", "openmpi-bin", "openssh-server", "-t gelu-vs-relu-mpi ."} {
		if !strings.Contains(string(docker), want) {
			t.Errorf("cluster/Dockerfile.mpi lacks %q", want)
		}
	}
	if lc.Image != "gelu-vs-relu-mpi:latest" || wc.Image != lc.Image {
		t.Errorf("images %q and %q, want Dockerfile.mpi's gelu-vs-relu-mpi:latest in both", lc.Image, wc.Image)
	}
	if !slices.Equal(wc.Command, []string{"/usr/sbin/sshd", "-De"}) {
		t.Errorf("the workers run %q, want sshd in the foreground (mpirun reaches them over SSH)", wc.Command)
	}
	// mpirun [options] /gelu-vs-relu, then the program's arguments.
	cmd := lc.Command
	if len(cmd) < 2 || cmd[0] != "mpirun" || cmd[len(cmd)-1] != "/gelu-vs-relu" || !slices.Contains(cmd, "--allow-run-as-root") {
		t.Fatalf("the launcher runs %q, want mpirun --allow-run-as-root ... /gelu-vs-relu (the image runs as root)", cmd)
	}
	i := slices.Index(cmd, "-np")
	if i < 0 || i+1 >= len(cmd) {
		t.Fatalf("the launcher's mpirun has no -np: %q", cmd)
	}
	np, err := strconv.Atoi(cmd[i+1])
	if err != nil || np != worker.Replicas*s.SlotsPerWorker {
		t.Fatalf("mpirun -np %s for %d workers of %d slots", cmd[i+1], worker.Replicas, s.SlotsPerWorker)
	}
	var mount string
	for _, m := range wc.Mounts {
		for _, v := range worker.Template.Spec.Volumes {
			if v.Name == m.Name && v.PVC != nil && v.PVC.ClaimName == pvc.Metadata.Name {
				mount = m.MountPath
			}
		}
	}
	if mount == "" {
		t.Fatalf("the workers mount no volume of claim %q: rank 0 runs in a worker and writes there", pvc.Metadata.Name)
	}
	for r := range np {
		// What mpirun tells each rank.
		t.Setenv("OMPI_COMM_WORLD_RANK", strconv.Itoa(r))
		t.Setenv("OMPI_COMM_WORLD_SIZE", strconv.Itoa(np))
		if !dist.Launched() {
			t.Fatalf("rank %d: the program would not see it was started by mpirun", r)
		}
		c, err := parseIn(lc.Args, nil)
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		if err := c.validate(); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		if n := gridRuns(c); n != 1 || c.Epochs != 50 || !c.Resume {
			t.Errorf("rank %d: %d runs of %d epochs (resume %v), want the paper's single run of 50 epochs, resumed by a retried launcher", r, n, c.Epochs, c.Resume)
		}
		if lo, hi, _ := dist.Shard(c.Batch, r, np); hi-lo < 1 {
			t.Errorf("rank %d has no rows of a batch of %d", r, c.Batch)
		}
		if rel, err := filepath.Rel(mount, c.Out); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("rank %d writes to %s, outside the shared volume at %s", r, c.Out, mount)
		}
	}
}

// The data-parallel sbatch script asks for tasks, starts them with srun
// --mpi=pmix, and runs the single-run mode (its runs are tested on a real
// Slurm by .ci/slurm-test.sh).
func TestSbatchDist(t *testing.T) {
	raw, err := os.ReadFile("cluster/gelu-vs-relu-dist.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#SBATCH --ntasks=(\d+)$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("no #SBATCH --ntasks=N line")
	}
	if n, _ := strconv.Atoi(m[1]); n < 2 {
		t.Errorf("--ntasks=%d: data-parallel training needs several", n)
	}
	if !strings.Contains(string(raw), "exec srun --mpi=pmix --kill-on-bad-exit=1") {
		t.Error("the script does not start its tasks with srun --mpi=pmix --kill-on-bad-exit=1")
	}
	c, err := parseIn([]string{"-full", "-opts", "adam", "-acts", "gelu", "-seeds", "1"}, nil)
	if err != nil || gridRuns(c) != 1 || c.Epochs != 50 {
		t.Errorf("the script's arguments: %v, %d runs of %d epochs; want the paper's single run", err, gridRuns(c), c.Epochs)
	}
	if !strings.Contains(string(raw), `-full -opts adam -acts gelu -seeds 1 -out "${GELU_OUT:-out/gelu-vs-relu-dist}"`) {
		t.Error("the script does not run -full -opts adam -acts gelu -seeds 1 into $GELU_OUT")
	}
}
