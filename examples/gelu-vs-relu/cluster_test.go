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

// gridRuns is the number of runs of the grid c describes.
func gridRuns(c config) int {
	n := 0
	for _, o := range c.Opts {
		n += len(c.lrs(o))
	}
	return n * len(c.Acts) * c.Seeds
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
