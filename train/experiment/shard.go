package experiment

// Splitting a grid over workers that share nothing but a folder: which runs
// a worker owns, and where it learns its index and the number of workers
// (a flag, a Slurm job array, a Kubernetes Indexed Job).

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Shard is one worker's part of a grid split over Count workers: the runs
// whose position k in the grid's order (seeds outermost, then settings)
// has k mod Count = Index. Dealing runs out in turn spreads each setting's
// cost over all workers. The zero value, like 0/1, is the whole grid.
type Shard struct{ Index, Count int }

// String returns "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.count()) }

func (s Shard) count() int { return max(1, s.Count) }

// owns reports whether the run at position k of the grid is this shard's.
func (s Shard) owns(k int) bool { return k%s.count() == s.Index }

// check returns an error unless 0 ≤ Index < Count (or the zero Shard).
func (s Shard) check() error {
	if s.Count < 0 || s.Index < 0 || s.Index >= s.count() {
		return fmt.Errorf("shard %d/%d: want 0 ≤ index < count", s.Index, s.Count)
	}
	return nil
}

// ParseShard parses "i/n", 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil || n < 1 {
		return Shard{}, fmt.Errorf("shard %q: want i/n, the worker's index i of n workers (0 ≤ i < n)", s)
	}
	sh := Shard{Index: i, Count: n}
	if i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: index %d out of range, want 0 ≤ i < %d", s, i, n)
	}
	return sh, nil
}

// Environment variables a worker's shard comes from when -shard is not
// given. Slurm sets the first five in every task of a job array; a
// Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in every pod, but not
// the number of completions, which the Job passes as ShardCountEnv (or
// the program as -shards).
const (
	SlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	SlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	SlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	SlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	SlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
	JobIndex       = "JOB_COMPLETION_INDEX"
	ShardCountEnv  = "SHARD_COUNT"
)

// ResolveShard returns the worker's shard: from flag ("i/n", as -shard
// takes it) when it is not empty; else from a Slurm job array (index
// SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT;
// the array must be a contiguous range, so that the tasks cover every
// index); else from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX of
// count, or of SHARD_COUNT when count is 0); else the whole grid. getenv
// is os.Getenv outside tests. Every variable that is set must be a valid
// number: a malformed one is an error, not a silent single-worker run.
func ResolveShard(flag string, count int, getenv func(string) string) (Shard, error) {
	if count < 0 {
		return Shard{}, fmt.Errorf("-shards %d: want the number of workers, ≥ 1", count)
	}
	if flag != "" {
		s, err := ParseShard(flag)
		if err == nil && count > 0 && count != s.Count {
			err = fmt.Errorf("-shard %s and -shards %d disagree on the number of workers", flag, count)
		}
		return s, err
	}
	slurm, k8s := getenv(SlurmTaskID) != "", getenv(JobIndex) != ""
	switch {
	case slurm && k8s:
		return Shard{}, fmt.Errorf("both %s and %s are set: is this a Slurm task or a Kubernetes pod? Give -shard i/n", SlurmTaskID, JobIndex)
	case slurm:
		if count > 0 {
			return Shard{}, fmt.Errorf("-shards %d in a Slurm job array, which sets the number of workers itself (%s)", count, SlurmTaskCount)
		}
		return slurmShard(getenv)
	case k8s:
		return indexedJobShard(getenv, count)
	case count > 0:
		return Shard{}, fmt.Errorf("-shards %d but no worker index: give -shard i/n, or run as a Kubernetes Indexed Job (%s)", count, JobIndex)
	}
	return Shard{Index: 0, Count: 1}, nil
}

// envInt reads the integer variable name; set is false when it is unset.
func envInt(getenv func(string) string, name string) (v int, set bool, err error) {
	s := getenv(name)
	if s == "" {
		return 0, false, nil
	}
	v, err = strconv.Atoi(strings.TrimSpace(s))
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, true, fmt.Errorf("%s=%q is beyond the range of int (%d..%d)", name, s, math.MinInt, math.MaxInt)
	case err != nil:
		return 0, true, fmt.Errorf("%s=%q is not an integer", name, s)
	}
	return v, true, nil
}

func slurmShard(getenv func(string) string) (Shard, error) {
	v := map[string]int{}
	for _, name := range []string{SlurmTaskID, SlurmTaskCount, SlurmTaskMin, SlurmTaskMax, SlurmTaskStep} {
		n, set, err := envInt(getenv, name)
		switch {
		case err != nil:
			return Shard{}, err
		case !set && name != SlurmTaskMax && name != SlurmTaskStep:
			return Shard{}, fmt.Errorf("%s is set but %s is not: run as a Slurm job array (sbatch --array=0-N), or give -shard i/n", SlurmTaskID, name)
		case set:
			v[name] = n
		}
	}
	// Slurm's array indices are ≥ 0, which also keeps every difference
	// below from overflowing.
	for _, name := range []string{SlurmTaskID, SlurmTaskMin, SlurmTaskMax} {
		if n, ok := v[name]; ok && n < 0 {
			return Shard{}, fmt.Errorf("%s=%d: want an array index ≥ 0", name, n)
		}
	}
	id, count, lo := v[SlurmTaskID], v[SlurmTaskCount], v[SlurmTaskMin]
	if count < 1 {
		return Shard{}, fmt.Errorf("%s=%d: want ≥ 1", SlurmTaskCount, count)
	}
	if count-1 > math.MaxInt-lo {
		return Shard{}, fmt.Errorf("%s=%d and %s=%d: the array's last index is beyond the largest integer", SlurmTaskMin, lo, SlurmTaskCount, count)
	}
	// A stepped or listed array (--array=0-6:2, --array=1,4,7) leaves
	// indices no task takes: those runs would silently never train.
	if hi, ok := v[SlurmTaskMax]; ok && (hi < lo || hi-lo != count-1) {
		return Shard{}, fmt.Errorf("the Slurm array runs %d tasks between %d and %d: want a contiguous range (--array=%d-%d, no step, no list), so every shard has a task",
			count, lo, hi, lo, lo+count-1)
	}
	if step, ok := v[SlurmTaskStep]; ok && step != 1 && count > 1 {
		return Shard{}, fmt.Errorf("%s=%d: want a contiguous array (step 1), so every shard has a task", SlurmTaskStep, step)
	}
	if id < lo || id-lo >= count {
		return Shard{}, fmt.Errorf("%s=%d is outside the array %d..%d (%s, %s)", SlurmTaskID, id, lo, lo+count-1, SlurmTaskMin, SlurmTaskCount)
	}
	return Shard{Index: id - lo, Count: count}, nil
}

func indexedJobShard(getenv func(string) string, count int) (Shard, error) {
	i, _, err := envInt(getenv, JobIndex)
	if err != nil {
		return Shard{}, err
	}
	n, set, err := envInt(getenv, ShardCountEnv)
	switch {
	case err != nil:
		return Shard{}, err
	case count == 0 && !set:
		return Shard{}, fmt.Errorf("%s=%d but the number of workers is unknown: set -shards or %s to the Job's completions", JobIndex, i, ShardCountEnv)
	case count > 0 && set && n != count:
		return Shard{}, fmt.Errorf("-shards %d and %s=%d disagree on the number of workers", count, ShardCountEnv, n)
	case count == 0:
		count = n
	}
	if count < 1 {
		return Shard{}, fmt.Errorf("%s=%d: want the number of workers, ≥ 1", ShardCountEnv, count)
	}
	if i < 0 || i >= count {
		return Shard{}, fmt.Errorf("%s=%d is out of range for %d workers (want 0 ≤ index < %d)", JobIndex, i, count, count)
	}
	return Shard{Index: i, Count: count}, nil
}
