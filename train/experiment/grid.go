package experiment

// The grid of runs: every setting with every seed, trained by a function
// the program gives, on one or more goroutines, stored per run so that an
// interrupted experiment can resume.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/geluproject/gelu/ops/gemm"
)

// Grid describes the runs of an experiment: every one of Settings with
// every one of Seeds. S is the program's own description of a setting
// (a struct of activation, learning rate, ...).
type Grid[S any] struct {
	Settings []S
	Seeds    []uint64
	// Name names a setting: distinct for distinct settings, and a relative
	// path when Dir is set ("adam/lr0.001/gelu"). It labels progress lines
	// and groups runs (Groups).
	Name func(S) string
	// Metrics names what every run records at each evaluation (Run.Curve).
	Metrics []string
	// Dir, if set, keeps each run in Dir/<name>/seed<n>: the run's own
	// files (pass Run.Dir to train.Config.Dir) and, once it has finished,
	// curve.csv and run.json, which Resume reads back.
	Dir string
	// Fingerprint is every setting the results depend on besides the run's
	// setting and seed (the program's flags, the data, the BLAS); Resume
	// reuses a stored run only when it was made with the same.
	Fingerprint string
	Resume      bool
	// Workers is how many runs train at once (default 1). Every run has its
	// own graph, data order and optimizer, so results do not depend on it.
	Workers int
	// Shard, if its Count is above 1, makes this process one of Count
	// workers sharing Dir, each training its share of the runs (Shard);
	// Resume is then implied, so that a worker started again continues.
	Shard Shard
	// Merge trains nothing: Run reads every run from Dir (written by the
	// shards) and fails, naming them, if some are missing or if Dir holds
	// folders that are no run of the grid.
	Merge bool
	// Shared marks a grid whose results every shard needs to go on (a
	// selection of settings that later grids train, say) rather than one
	// whose report one shard makes: when every run is finished, Run returns
	// them to every shard, and no shard claims a report.
	Shared bool
	// Progress, if set, gets a line per finished run; Note adds to it.
	Progress io.Writer
	Note     func(*Run[S]) string
}

// Run is one run of a Grid: its setting and seed, and what it measured.
type Run[S any] struct {
	Setting S
	Seed    uint64
	Name    string // Grid.Name(Setting)
	Dir     string // Grid.Dir/<name>/seed<n>, created before training; "" when the grid keeps no files
	// Curve holds the evaluations (Curve.Add), with the grid's Metrics.
	Curve Curve
	// Values and Vectors hold anything else the run measured, per name:
	// numbers, and sequences (every step's loss, every example's loss).
	// Both are stored for Resume.
	Values  map[string]float64
	Vectors map[string][]float64
	// Set by Train:
	Steps       int     // optimizer steps done
	Diverged    string  // the error that stopped a diverged run; "" if it did not diverge
	Seconds     float64 // wall time of Train (0 when resumed)
	StepSeconds float64 // the part spent in optimizer steps (forward, backward, update), evaluations excluded
	Resumed     bool    // read back from Dir instead of trained
}

// Run trains every run of the grid with train, seeds outermost (so an
// interrupted experiment has complete seeds) and settings in order, and
// returns them in that order. train fills in the run (Curve.Add, Values,
// usually through Run.Train). The first error stops the grid: runs not
// started yet are skipped, and the error names the run.
//
// With Shard set to i/n (n > 1), Run trains only its share of the runs,
// resuming those already finished (see Shard, and the package doc on
// sharding), then reads the other shards' finished runs from Dir: when
// every run is there and this shard is the first to claim the report (or
// the grid is Shared), it returns them all, as a single process would;
// otherwise it returns an *IncompleteError. With Merge it trains nothing
// and returns every run read from Dir, or an error naming those missing.
func (g Grid[S]) Run(train func(*Run[S]) error) ([]*Run[S], error) {
	runs, err := g.runs()
	if err != nil {
		return nil, err
	}
	if err := g.prepare(runs); err != nil {
		return nil, err
	}
	// Every run gets one BLAS thread: OpenBLAS's last bits depend on its
	// thread count, so a count that followed Workers (or the shard layout)
	// would make the results depend on them; and the networks these grids
	// train are small enough that parallel runs use the cores better than
	// threads within a product do. A merge sets it too, so that what the
	// program computes after the grid is computed as in a process that
	// trained. A BLAS without threads (gonum) has no setting to make, which
	// is not an error.
	_ = setBLASThreads(1)
	var mine []int
	for k := range runs {
		if !g.Merge && g.Shard.owns(k) {
			mine = append(mine, k)
		}
	}
	if g.Shard.count() > 1 {
		if err := g.clearStaleReport(runs, mine); err != nil {
			return nil, err
		}
	}
	if err := g.train(runs, mine, train); err != nil {
		return nil, err
	}
	if len(mine) == len(runs) {
		return runs, nil
	}
	return g.gather(runs, mine)
}

// runs lists the grid's runs in order, seeds outermost.
func (g Grid[S]) runs() ([]*Run[S], error) {
	if g.Name == nil || len(g.Settings) == 0 || len(g.Seeds) == 0 {
		return nil, fmt.Errorf("experiment: Grid needs Name, Settings and Seeds (have %d settings, %d seeds)", len(g.Settings), len(g.Seeds))
	}
	var runs []*Run[S]
	seen := map[string]bool{}
	for _, seed := range g.Seeds {
		for _, s := range g.Settings {
			name := g.Name(s)
			if key := fmt.Sprint(name, "\x00", seed); seen[key] {
				return nil, fmt.Errorf("experiment: run %q seed %d appears twice in the grid (a setting or seed given twice?)", name, seed)
			} else {
				seen[key] = true
			}
			r := &Run[S]{Setting: s, Seed: seed, Name: name}
			if g.Dir != "" {
				r.Dir = filepath.Join(g.Dir, filepath.FromSlash(name), fmt.Sprintf("seed%d", seed))
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// train trains runs[k] for every k in mine, on g.Workers goroutines.
func (g Grid[S]) train(runs []*Run[S], mine []int, train func(*Run[S]) error) error {
	if len(mine) == 0 {
		return nil
	}
	errs := make([]error, len(runs))
	next := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	done, failed, start := 0, false, time.Now()
	for range max(1, g.Workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = g.one(runs[i], train)
				mu.Lock()
				done++
				failed = failed || errs[i] != nil
				if g.Progress != nil && errs[i] == nil {
					fmt.Fprintf(g.Progress, "[%d/%d %.0fs] %s\n", done, len(mine), time.Since(start).Seconds(), g.describe(runs[i]))
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range mine {
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s seed %d: %w", runs[i].Name, runs[i].Seed, err)
		}
	}
	return nil
}

func (g Grid[S]) describe(r *Run[S]) string {
	s := fmt.Sprintf("%s seed %d", r.Name, r.Seed)
	if g.Note != nil {
		if n := g.Note(r); n != "" {
			s += ": " + n
		}
	}
	switch {
	case r.Resumed:
		return s + " (resumed)"
	case r.Diverged != "":
		s += fmt.Sprintf(", diverged after %d steps", r.Steps)
	}
	return s + fmt.Sprintf(" (%.1fs)", r.Seconds)
}

// one resumes or trains r, turning a panic into an error.
func (g Grid[S]) one(r *Run[S], train func(*Run[S]) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	fp := g.fingerprint(r)
	if (g.Resume || g.Shard.count() > 1) && r.Dir != "" {
		ok, err := r.load(fp, g.Metrics)
		if ok || err != nil {
			return err
		}
	}
	r.Curve = NewCurve(g.Metrics...)
	r.Values, r.Vectors = map[string]float64{}, map[string][]float64{}
	if r.Dir != "" {
		if err := os.MkdirAll(r.Dir, 0o755); err != nil {
			return err
		}
		// A run.json left from an earlier run must not vouch for this one's
		// files if it stops half way.
		if err := os.Remove(filepath.Join(r.Dir, runFile)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := train(r); err != nil {
		return err
	}
	if r.Dir == "" {
		return nil
	}
	return r.save(fp)
}

// fingerprint is what a stored run must match to be reused.
func (g Grid[S]) fingerprint(r *Run[S]) string {
	return fmt.Sprintf("%s\nrun=%s seed=%d metrics=%s", g.Fingerprint, r.Name, r.Seed, strings.Join(g.Metrics, ","))
}

// setBLASThreads sets the BLAS's thread count for the runs a grid trains.
var setBLASThreads = gemm.SetThreads

// RunBLAS sets the BLAS up as Grid.Run does for its runs (one thread) and
// returns its name, gemm.Name: for a Fingerprint, which is computed
// before the grid runs and must name the BLAS the runs use.
func RunBLAS() string {
	_ = setBLASThreads(1)
	return gemm.Name()
}

// Find returns the run of the named setting and seed, nil if none.
func Find[S any](runs []*Run[S], name string, seed uint64) *Run[S] {
	if i := slices.IndexFunc(runs, func(r *Run[S]) bool { return r.Name == name && r.Seed == seed }); i >= 0 {
		return runs[i]
	}
	return nil
}
