package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestResolveShard(t *testing.T) {
	maxInt, maxInt1, minInt := strconv.Itoa(math.MaxInt), strconv.Itoa(math.MaxInt-1), strconv.Itoa(math.MinInt)
	slurm := func(id, count, lo, hi string) []string {
		return []string{SlurmTaskID, id, SlurmTaskCount, count, SlurmTaskMin, lo, SlurmTaskMax, hi}
	}
	for _, c := range []struct {
		flag   string
		count  int
		env    []string
		want   Shard
		errHas string // "" when no error is expected
	}{
		{want: Shard{0, 1}},
		{flag: "2/5", want: Shard{2, 5}},
		{flag: " 0 / 1 ", want: Shard{0, 1}},
		{flag: "2/5", env: slurm("0", "4", "0", "3"), want: Shard{2, 5}}, // the flag wins
		{flag: "5/5", errHas: "out of range"},
		{flag: "-1/5", errHas: "out of range"},
		{flag: "1/0", errHas: "want i/n"},
		{flag: "1-4", errHas: "want i/n"},
		{flag: "a/4", errHas: "want i/n"},
		{flag: "1/4", count: 3, errHas: "disagree"},
		{count: -1, errHas: "-shards -1"},
		{count: 4, errHas: "no worker index"},
		// Slurm: --array=0-3 and --array=4-7 both make shards 0..3 of 4.
		{env: slurm("0", "4", "0", "3"), want: Shard{0, 4}},
		{env: slurm("6", "4", "4", "7"), want: Shard{2, 4}},
		{env: []string{SlurmTaskID, "3", SlurmTaskCount, "4", SlurmTaskMin, "0"}, want: Shard{3, 4}}, // MAX is optional
		{env: slurm("1", "1", "1", "1"), want: Shard{0, 1}},
		{env: []string{SlurmTaskID, "3", SlurmTaskMin, "0"}, errHas: SlurmTaskCount + " is not"},
		{env: []string{SlurmTaskID, "3", SlurmTaskCount, "4"}, errHas: SlurmTaskMin + " is not"},
		{env: slurm("x", "4", "0", "3"), errHas: `SLURM_ARRAY_TASK_ID="x" is not an integer`},
		{env: slurm("1", "four", "0", "3"), errHas: "SLURM_ARRAY_TASK_COUNT=\"four\""},
		{env: slurm("2", "3", "0", "4"), errHas: "contiguous"},                                            // --array=0,2,4
		{env: append(slurm("2", "3", "0", "2"), SlurmTaskStep, "2"), errHas: "contiguous array (step 1)"}, // cannot happen, but is caught
		{env: slurm("9", "4", "0", "3"), errHas: "outside the array"},
		{env: slurm("0", "4", "0", "3"), count: 4, errHas: "Slurm job array, which sets"},
		// Slurm's indices are ≥ 0; a difference or sum that overflows int
		// is an error, not a wrapped shard index.
		{env: []string{SlurmTaskID, maxInt, SlurmTaskCount, "3", SlurmTaskMin, "-5"}, errHas: "SLURM_ARRAY_TASK_MIN=-5: want an array index ≥ 0"},
		{env: []string{SlurmTaskID, minInt, SlurmTaskCount, "3", SlurmTaskMin, maxInt}, errHas: "SLURM_ARRAY_TASK_ID=" + minInt + ": want an array index ≥ 0"},
		{env: slurm(maxInt, "2", maxInt1, minInt), errHas: "SLURM_ARRAY_TASK_MAX=" + minInt + ": want an array index ≥ 0"},
		{env: slurm(maxInt, maxInt, maxInt1, maxInt), errHas: "the array's last index is beyond the largest integer"},
		{env: slurm(maxInt, maxInt, "0", "0"), errHas: "contiguous range"},
		{env: slurm("1", maxInt, "0", maxInt1), want: Shard{1, math.MaxInt}},
		{env: slurm(maxInt, maxInt, "1", maxInt), want: Shard{math.MaxInt - 1, math.MaxInt}},
		{env: []string{SlurmTaskID, maxInt, SlurmTaskCount, "2", SlurmTaskMin, maxInt1}, want: Shard{1, 2}},
		{env: []string{SlurmTaskID, "0", SlurmTaskCount, "2", SlurmTaskMin, maxInt1}, errHas: "outside the array"},
		{env: []string{SlurmTaskID, maxInt + "0", SlurmTaskCount, "2", SlurmTaskMin, "0"}, errHas: "beyond the range of int"},
		// Kubernetes Indexed Jobs.
		{env: []string{JobIndex, "3", ShardCountEnv, "4"}, want: Shard{3, 4}},
		{env: []string{JobIndex, "3"}, count: 4, want: Shard{3, 4}},
		{env: []string{JobIndex, "3", ShardCountEnv, "4"}, count: 4, want: Shard{3, 4}},
		{env: []string{JobIndex, "3"}, errHas: "number of workers is unknown"},
		{env: []string{JobIndex, "4", ShardCountEnv, "4"}, errHas: "out of range"},
		{env: []string{JobIndex, "-1", ShardCountEnv, "4"}, errHas: "out of range"},
		{env: []string{JobIndex, "1", ShardCountEnv, "0"}, errHas: "want the number of workers"},
		{env: []string{JobIndex, "1", ShardCountEnv, "4"}, count: 3, errHas: "disagree"},
		{env: []string{JobIndex, "one", ShardCountEnv, "4"}, errHas: `JOB_COMPLETION_INDEX="one" is not an integer`},
		{env: []string{JobIndex, "1", ShardCountEnv, "4x"}, errHas: `SHARD_COUNT="4x"`},
		{env: append(slurm("0", "4", "0", "3"), JobIndex, "0"), errHas: "both"},
	} {
		got, err := ResolveShard(c.flag, c.count, env(c.env...))
		name := fmt.Sprintf("flag %q count %d env %v", c.flag, c.count, c.env)
		switch {
		case c.errHas == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.errHas == "" && got != c.want:
			t.Errorf("%s: shard %v, want %v", name, got, c.want)
		case c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)):
			t.Errorf("%s: shard %v, error %v; want an error containing %q", name, got, err, c.errHas)
		}
	}
}

// Every run is trained by exactly one shard, shards take turns along the
// grid's order, and the shards' runs together are the whole grid.
func TestShardsPartitionTheGrid(t *testing.T) {
	for _, n := range []int{1, 2, 4, 9} {
		var mu sync.Mutex
		owner := map[string][]int{}
		dir := t.TempDir()
		for i := range n {
			g := toyGrid(dir, 2)
			g.Shard = Shard{i, n}
			_, err := g.Run(func(r *Run[float64]) error {
				mu.Lock()
				owner[fmt.Sprint(r.Name, r.Seed)] = append(owner[fmt.Sprint(r.Name, r.Seed)], i)
				mu.Unlock()
				return toyRun(r)
			})
			if last := i == n-1; last && err != nil || !last && !errors.Is(err, ErrIncomplete) {
				t.Fatalf("%d shards: shard %d returned %v", n, i, err)
			}
		}
		k := 0
		for _, seed := range []uint64{1, 2, 3} {
			for _, lr := range []float64{0.1, 0.2, 0.3} {
				who := owner[fmt.Sprint(fmt.Sprintf("lr%g", lr), seed)]
				if !slices.Equal(who, []int{k % n}) {
					t.Errorf("%d shards: run %d (lr%g seed %d) trained by shards %v, want [%d]", n, k, lr, seed, who, k%n)
				}
				k++
			}
		}
	}
}

// writeToyReport writes what a program would make of the runs.
func writeToyReport(t *testing.T, dir string, runs []*Run[float64]) {
	t.Helper()
	r, err := report.New(dir, "toy")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCurves(r, "curves", runs, []string{"lr", "seed", "step"}, func(run *Run[float64], step int) []any {
		return []any{run.Setting, run.Seed, step}
	}); err != nil {
		t.Fatal(err)
	}
	if err := WriteBands(r, "bands", Groups(runs), []string{"lr", "step"}, func(g *Group[float64], step int) []any {
		return []any{g.Setting, step}
	}); err != nil {
		t.Fatal(err)
	}
	for _, g := range Groups(runs) {
		r.Set("final_"+g.Name, Median(g.Value("final")))
	}
	r.Describe("final_*", "median final loss")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Shards running at the same time on one folder, then a merge, give the
// report of one process, byte for byte, and the same runs.
func TestShardedGridMakesTheSameReport(t *testing.T) {
	whole, err := toyGrid(t.TempDir(), 1).Run(toyRun)
	if err != nil {
		t.Fatal(err)
	}
	oneDir := t.TempDir()
	writeToyReport(t, oneDir, whole)

	runsDir := t.TempDir()
	const n = 4
	var trained atomic.Int32
	errs := make([]error, n)
	var complete atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			g := toyGrid(runsDir, 2)
			g.Shard = Shard{i, n}
			runs, err := g.Run(func(r *Run[float64]) error { trained.Add(1); return toyRun(r) })
			if err == nil && len(runs) == 9 {
				complete.Add(1)
			}
			if errors.Is(err, ErrIncomplete) {
				err = nil
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if trained.Load() != 9 || complete.Load() != 1 {
		t.Errorf("%d runs trained (want 9), %d shards returned the whole grid (want 1, the one that claimed the report)", trained.Load(), complete.Load())
	}
	g := toyGrid(runsDir, 1)
	g.Merge = true
	merged, err := g.Run(func(*Run[float64]) error { return errors.New("a merge trained a run") })
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(strip(whole)), fmt.Sprint(strip(merged)); a != b {
		t.Errorf("merged runs differ from one process's:\n%s\n%s", a, b)
	}
	shardDir := t.TempDir()
	writeToyReport(t, shardDir, merged)
	a, b := readTree(t, oneDir), readTree(t, shardDir)
	if len(a) < 3 {
		t.Fatalf("the report has only %d files", len(a))
	}
	for name, content := range a {
		if b[name] != content {
			t.Errorf("%s differs between one process and %d shards", name, n)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d files from one process, %d from the shards", len(a), len(b))
	}

	// A shard started again (a requeued task) trains nothing; it returns
	// the whole grid only if it is the one that claimed the report.
	finished := func(what string, runs []*Run[float64], err error) {
		t.Helper()
		var inc *IncompleteError
		if !(err == nil && len(runs) == 9) && !(errors.As(err, &inc) && inc.Present == 9 && inc.Reporter.Count == n) {
			t.Errorf("%s: %d runs, %v; want all 9 finished", what, len(runs), err)
		}
	}
	g = toyGrid(runsDir, 1)
	g.Shard = Shard{2, n}
	runs, err := g.Run(func(r *Run[float64]) error { return errors.New("trained again") })
	finished("a shard started again", runs, err)
	// Split anew (grid.json removed): the finished runs still count.
	if err := os.Remove(filepath.Join(runsDir, manifestFile)); err != nil {
		t.Fatal(err)
	}
	g.Shard = Shard{0, 3}
	runs, err = g.Run(func(r *Run[float64]) error { return errors.New("trained again") })
	finished("split into 3 after 4", runs, err)
}

func TestShardErrorsBeforeAnyRun(t *testing.T) {
	never := func(r *Run[float64]) error { return fmt.Errorf("run %s seed %d started", r.Name, r.Seed) }
	run := func(dir string, shard Shard, change func(*Grid[float64])) error {
		g := toyGrid(dir, 1)
		g.Shard = shard
		if change != nil {
			change(&g)
		}
		_, err := g.Run(never)
		return err
	}
	wantErr := func(what string, err error, has string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), has) {
			t.Errorf("%s: error %v, want one containing %q", what, err, has)
		}
	}
	wantErr("index out of range", run(t.TempDir(), Shard{3, 3}, nil), "want 0 ≤ index < count")
	wantErr("more shards than runs", run(t.TempDir(), Shard{0, 10}, nil), "10 shards for 9 runs")
	wantErr("no folder", run("", Shard{0, 2}, nil), "needs Dir")
	wantErr("merge without folder", run("", Shard{}, func(g *Grid[float64]) { g.Merge = true }), "needs Dir")

	// The first worker of a 2-shard grid records it; a worker told 3 shards,
	// or running another grid, is stopped before it trains anything.
	dir := t.TempDir()
	g := toyGrid(dir, 1)
	g.Shard = Shard{0, 2}
	if _, err := g.Run(toyRun); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("shard 0/2: %v", err)
	}
	wantErr("counts disagree", run(dir, Shard{1, 3}, nil), "split into 2 shards")
	wantErr("another grid", run(dir, Shard{1, 2}, func(g *Grid[float64]) { g.Fingerprint = "toy v2" }), "holds another grid's runs")
	wantErr("another grid (more seeds)", run(dir, Shard{1, 2}, func(g *Grid[float64]) { g.Seeds = append(g.Seeds, 4) }), "holds another grid's runs")
	wantErr("merge of another grid", run(dir, Shard{}, func(g *Grid[float64]) { g.Merge = true; g.Fingerprint = "toy v2" }), "holds another grid's runs")
	wantErr("merge before shard 1 ran", run(dir, Shard{}, func(g *Grid[float64]) { g.Merge = true }), "4 of the grid's 9 runs are not finished")

	// A folder a single process filled with another grid's runs (so without
	// grid.json) is not taken over by shards either.
	dir = t.TempDir()
	if _, err := toyGrid(dir, 2).Run(toyRun); err != nil {
		t.Fatal(err)
	}
	wantErr("runs of another grid", run(dir, Shard{0, 2}, func(g *Grid[float64]) { g.Fingerprint = "toy v2" }), "made with other settings")

	// A damaged grid.json is neither trusted nor replaced.
	os.WriteFile(filepath.Join(dir, manifestFile), []byte("{"), 0o644)
	wantErr("damaged grid.json", run(dir, Shard{0, 2}, nil), "cannot be read")
	if b, _ := os.ReadFile(filepath.Join(dir, manifestFile)); string(b) != "{" {
		t.Errorf("the damaged grid.json was rewritten: %q", b)
	}
}

// A run another shard is still writing (curve.csv and a temporary
// run.json, no run.json yet) is neither read nor removed.
func TestShardLeavesOthersHalfWrittenRuns(t *testing.T) {
	dir := t.TempDir()
	// Run 1 of the grid (lr0.2 seed 1) is shard 1's of 2.
	half := filepath.Join(dir, "lr0.2", "seed1")
	os.MkdirAll(half, 0o755)
	files := map[string]string{"curve.csv": "step,loss,noise\n2,0.5,0.1\n", ".run.json.tmp-12345": `{"fingerprint": "`}
	for name, content := range files {
		os.WriteFile(filepath.Join(half, name), []byte(content), 0o644)
	}
	g := toyGrid(dir, 2)
	g.Shard = Shard{0, 2}
	if _, err := g.Run(toyRun); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "5 of the grid's 9 runs") {
		t.Errorf("shard 0/2: error %v, want it incomplete with 5 of 9 runs", err)
	}
	for name, content := range files {
		if b, err := os.ReadFile(filepath.Join(half, name)); err != nil || string(b) != content {
			t.Errorf("%s of the half-written run: %q, %v", name, b, err)
		}
	}
	g.Shard, g.Merge = Shard{}, true
	if _, err := g.Run(toyRun); err == nil || !strings.Contains(err.Error(), "lr0.2 seed 1") {
		t.Errorf("merge: %v, want an error naming lr0.2 seed 1", err)
	}
	g.Shard, g.Merge = Shard{1, 2}, false
	if runs, err := g.Run(toyRun); err != nil || len(runs) != 9 {
		t.Errorf("shard 1/2, the last: %d runs, %v", len(runs), err)
	}
}

func TestGridSetsOneBLASThread(t *testing.T) {
	defer func(f func(int) error) { setBLASThreads = f }(setBLASThreads)
	var calls []int
	setBLASThreads = func(n int) error { calls = append(calls, n); return errors.New("no threads here") }
	dir := t.TempDir()
	if _, err := toyGrid(dir, 3).Run(toyRun); err != nil {
		t.Fatal(err)
	}
	if _, err := toyGrid("", 1).Run(toyRun); err != nil {
		t.Fatal(err)
	}
	g := toyGrid(dir, 3)
	g.Merge = true
	if _, err := g.Run(toyRun); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []int{1, 1, 1}) {
		t.Errorf("thread counts set: %v, want [1 1 1] (one per grid, merged or not)", calls)
	}
}

func TestCommandDropsShardFlags(t *testing.T) {
	got := Command([]string{"prog", "-epochs", "2", "-shard", "1/4", "-merge", "--shards=4", "-merge=true", "-out", "x", "-shard=0/2", "-shards", "3", "-resume"})
	if want := []string{"prog", "-epochs", "2", "-out", "x", "-resume"}; !slices.Equal(got, want) {
		t.Errorf("Command: %q, want %q", got, want)
	}
}

// Two shards finishing at the same moment, many times over: exactly one
// returns the whole grid (and so makes the report); the other returns an
// ErrIncomplete, naming the reporter if it saw the grid complete too.
func TestShardsFinishingTogetherReportOnce(t *testing.T) {
	const tries = 100
	for try := range tries {
		dir := t.TempDir()
		var together sync.WaitGroup // both shards have trained their run
		together.Add(2)
		runs := make([][]*Run[float64], 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				g := Grid[float64]{Settings: []float64{0.1}, Seeds: []uint64{1, 2}, Metrics: []string{"loss", "noise"},
					Name: func(lr float64) string { return fmt.Sprintf("lr%g", lr) }, Dir: dir, Fingerprint: "toy v1", Shard: Shard{i, 2}}
				runs[i], errs[i] = g.Run(func(r *Run[float64]) error {
					err := toyRun(r)
					together.Done()
					together.Wait()
					return err
				})
			})
		}
		wg.Wait()
		var whole []int
		for i, err := range errs {
			var inc *IncompleteError
			switch {
			case err == nil && len(runs[i]) == 2:
				whole = append(whole, i)
			case errors.As(err, &inc) && inc.Present == 1 && inc.Reporter == Shard{}:
				// It finished before the other had stored its run.
			case errors.As(err, &inc) && inc.Present == 2 && inc.Reporter == Shard{1 - i, 2}:
			default:
				t.Fatalf("try %d: shard %d/2 returned %d runs, %v", try, i, len(runs[i]), err)
			}
		}
		if len(whole) != 1 {
			t.Fatalf("try %d: shards %v returned the whole grid, want exactly one", try, whole)
		}
	}
}

// The shard that claimed the report may make it again when started again
// (a requeued task whose report failed); another shard started again
// leaves it to the claimant; a shard that trains anything makes a new
// report due.
func TestReportClaimOnRestart(t *testing.T) {
	dir := t.TempDir()
	shard := func(i int, train func(*Run[float64]) error) ([]*Run[float64], error) {
		g := toyGrid(dir, 1)
		g.Shard = Shard{i, 2}
		return g.Run(train)
	}
	never := func(r *Run[float64]) error { return fmt.Errorf("run %s seed %d trained again", r.Name, r.Seed) }
	if _, err := shard(0, toyRun); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("shard 0/2 first: %v", err)
	}
	if runs, err := shard(1, toyRun); err != nil || len(runs) != 9 {
		t.Fatalf("shard 1/2 last: %d runs, %v", len(runs), err)
	}
	_, err := shard(0, never)
	var inc *IncompleteError
	if !errors.As(err, &inc) || inc.Reporter != (Shard{1, 2}) || !strings.Contains(err.Error(), "shard 1/2, which claimed the report first, makes it") ||
		!strings.Contains(err.Error(), "-merge") {
		t.Errorf("shard 0/2 again: %v, want ErrIncomplete naming shard 1/2 as the reporter and -merge as the way out", err)
	}
	if runs, err := shard(1, never); err != nil || len(runs) != 9 {
		t.Errorf("shard 1/2 again: %d runs, %v; want the whole grid again (its report may have failed)", len(runs), err)
	}
	// Shard 0's first run is trained again: the old report is stale.
	if err := os.Remove(filepath.Join(dir, "lr0.1", "seed1", runFile)); err != nil {
		t.Fatal(err)
	}
	if runs, err := shard(0, toyRun); err != nil || len(runs) != 9 {
		t.Errorf("shard 0/2 after retraining a run: %d runs, %v; want the whole grid", len(runs), err)
	}
}

// A merge, or a shard, refuses a folder holding folders that are no run of
// the grid (another seed, another setting, anything else), naming them:
// the report would silently leave them out.
func TestMergeNamesStrayFolders(t *testing.T) {
	dir := t.TempDir()
	if _, err := toyGrid(dir, 2).Run(toyRun); err != nil {
		t.Fatal(err)
	}
	stray := []string{"lr0.4", filepath.Join("lr0.1", "seed7"), "notes"}
	for _, s := range stray {
		if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "lr0.4", runFile), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("a file is not a folder"), 0o644)
	for _, shard := range []Shard{{}, {1, 2}} {
		g := toyGrid(dir, 1)
		g.Merge, g.Shard = shard.Count == 0, shard
		_, err := g.Run(func(*Run[float64]) error { return errors.New("trained") })
		if err == nil {
			t.Errorf("merge=%v shard %v: no error", g.Merge, shard)
			continue
		}
		for _, s := range stray {
			if !strings.Contains(err.Error(), filepath.ToSlash(s)) {
				t.Errorf("merge=%v shard %v: error %q does not name %s", g.Merge, shard, err, s)
			}
		}
		if strings.Contains(err.Error(), "README") || strings.Contains(err.Error(), "trained") {
			t.Errorf("merge=%v shard %v: error %q names a file, or a run was trained", g.Merge, shard, err)
		}
	}
	for _, s := range stray {
		os.RemoveAll(filepath.Join(dir, s))
	}
	g := toyGrid(dir, 1)
	g.Merge = true
	if runs, err := g.Run(toyRun); err != nil || len(runs) != 9 {
		t.Errorf("merge without the stray folders: %d runs, %v", len(runs), err)
	}
}

// A Shared grid (a selection every shard needs to go on) gives every shard
// the whole grid once every run is finished, and claims no report: both
// shards finishing together get both runs, and a shard started again gets
// them too.
func TestSharedGridGoesToEveryShard(t *testing.T) {
	dir := t.TempDir()
	var together sync.WaitGroup
	together.Add(2)
	grid := func(i int) Grid[float64] {
		return Grid[float64]{Settings: []float64{0.1}, Seeds: []uint64{1, 2}, Metrics: []string{"loss", "noise"},
			Name: func(lr float64) string { return fmt.Sprintf("lr%g", lr) }, Dir: dir, Fingerprint: "toy v1", Shard: Shard{i, 2}, Shared: true}
	}
	runs := make([][]*Run[float64], 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			runs[i], errs[i] = grid(i).Run(func(r *Run[float64]) error {
				err := toyRun(r)
				together.Done()
				together.Wait()
				return err
			})
		})
	}
	wg.Wait()
	for i := range 2 {
		var inc *IncompleteError
		if errs[i] != nil && !(errors.As(errs[i], &inc) && inc.Present == 1) { // it may look before the other stored its run
			t.Fatalf("shard %d/2: %v", i, errs[i])
		}
		again, err := grid(i).Run(func(*Run[float64]) error { return errors.New("trained again") })
		if err != nil || len(again) != 2 {
			t.Errorf("shard %d/2 started again: %d runs, %v; want both", i, len(again), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, reporterFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a Shared grid claimed a report: %v", err)
	}
}
