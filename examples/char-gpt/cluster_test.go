package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/experiment"
)

// The sbatch script runs -full into $GELU_OUT as a contiguous array whose
// task i, as the program reads Slurm's variables, is shard i/n of both
// grids; each grid has at least as many runs as the array has tasks (a
// worker with nothing to do is refused).
func TestSbatchArray(t *testing.T) {
	raw, err := os.ReadFile("cluster/char-gpt.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#SBATCH --array=(\d+)-(\d+)$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("no #SBATCH --array=a-b line")
	}
	lo, _ := strconv.Atoi(m[1])
	hi, _ := strconv.Atoi(m[2])
	if !strings.Contains(string(raw), `-full -out "${GELU_OUT:-out/char-gpt-full}"`) || !strings.Contains(string(raw), "--dependency=afterany") {
		t.Error("the script does not run -full into $GELU_OUT, or does not say how to submit the second array")
	}
	n := hi - lo + 1
	for task := lo; task <= hi; task++ {
		fs := flag.NewFlagSet("char-gpt", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		env := map[string]string{"SLURM_ARRAY_TASK_ID": strconv.Itoa(task), "SLURM_ARRAY_TASK_MIN": m[1], "SLURM_ARRAY_TASK_COUNT": strconv.Itoa(n)}
		c, err := parseFlags(fs, []string{"-full", "-out", "out/char-gpt-full", "-workers", "2"}, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if c.Part != (experiment.Shard{Index: task - lo, Count: n}) {
			t.Errorf("task %d: shard %v, want %d/%d", task, c.Part, task-lo, n)
		}
		if sel, more := len(c.MLPs)*len(c.LRs), len(c.MLPs)*(c.Seeds-1); n < 2 || n > sel || n > more {
			t.Errorf("--array=%s-%s: %d tasks for grids of %d and %d runs", m[1], m[2], n, sel, more)
		}
	}
}
