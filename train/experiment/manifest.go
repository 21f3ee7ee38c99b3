package experiment

// What the workers of a sharded grid agree on: before any of them trains,
// grid.json in the grid's folder records which grid the folder holds and
// into how many shards it is split; at the end, reporter.json records
// which worker makes the report. The first worker to get there creates
// each (a hard link of a finished temporary file, which fails rather than
// replace a file another worker made first); every later one reads it.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const manifestFile, reporterFile = "grid.json", "reporter.json"

type manifest struct {
	Grid   string `json:"grid"`   // gridKey: the fingerprint, metrics and every run's name and seed
	Runs   int    `json:"runs"`   // for the error messages
	Shards int    `json:"shards"` // the number of workers
}

// ErrIncomplete is what a shard's Grid.Run returns (wrapped in an
// *IncompleteError) when it has trained its runs and another worker makes
// the report: other shards' runs are not all finished yet, or they are and
// another shard claimed the report first. Not a failure of this worker.
var ErrIncomplete = errors.New("experiment: another shard makes the grid's report")

// IncompleteError says how far a sharded grid is.
type IncompleteError struct {
	Shard          Shard
	Present, Total int // finished runs found in Dir, runs in the grid
	// Reporter is the shard that claimed the report when every run is
	// finished; the zero Shard while runs are missing.
	Reporter Shard
}

func (e *IncompleteError) Error() string {
	if e.Reporter.Count > 0 {
		return fmt.Sprintf("shard %s done; all %d of the grid's runs are finished, and shard %s, which claimed the report first, makes it "+
			"(if it failed before writing it, run with -merge)", e.Shard, e.Total, e.Reporter)
	}
	return fmt.Sprintf("shard %s done; %d of the grid's %d runs are finished: the shard that finds them all finished, or a run with -merge, makes the report",
		e.Shard, e.Present, e.Total)
}

func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

// gridKey identifies the grid: two grids with the same key have the same
// runs made with the same settings.
func (g Grid[S]) gridKey(runs []*Run[S]) string {
	h := sha256.New()
	for _, r := range runs {
		fmt.Fprintf(h, "%q\n", g.fingerprint(r))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// prepare checks, before any run starts, that the shard and Dir make
// sense together and that Dir holds this grid or nothing.
func (g Grid[S]) prepare(runs []*Run[S]) error {
	if err := g.Shard.check(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	sharded := g.Shard.count() > 1
	if g.Shard.count() > len(runs) {
		return fmt.Errorf("experiment: %d shards for %d runs: some workers would have nothing to do; use at most %d", g.Shard.count(), len(runs), len(runs))
	}
	if (sharded || g.Merge) && g.Dir == "" {
		return fmt.Errorf("experiment: a sharded or merged grid needs Dir, the folder its workers share")
	}
	if g.Dir == "" {
		return nil
	}
	if sharded || g.Merge {
		if err := g.checkStray(runs); err != nil {
			return err
		}
	}
	want := manifest{Grid: g.gridKey(runs), Runs: len(runs), Shards: g.Shard.count()}
	path := filepath.Join(g.Dir, manifestFile)
	have, err := readManifest(path)
	switch {
	case err != nil:
		return err
	case !sharded && !g.Merge:
		// A single process owns the folder: a record of another grid would
		// only mislead later workers.
		if have != nil && have.Grid != want.Grid {
			return os.Remove(path)
		}
		return nil
	case have == nil && g.Merge:
		// Runs written by a single process (no grid.json) merge too, if
		// they are this grid's.
		return g.checkForeign(runs)
	case have == nil:
		if have, err = createManifest(path, want); err != nil {
			return err
		}
	}
	if have.Grid != want.Grid {
		return fmt.Errorf("experiment: %s holds another grid's runs (%d runs, key %.12s…; this grid: %d runs, key %.12s…): "+
			"give another output folder, or remove this one", g.Dir, have.Runs, have.Grid, want.Runs, want.Grid)
	}
	if sharded && have.Shards != want.Shards {
		return fmt.Errorf("experiment: this worker is shard %s, but the grid in %s is split into %d shards (%s): every worker must be given the same count "+
			"(to split it anew, remove %s while no worker runs; finished runs are kept)", g.Shard, g.Dir, have.Shards, path, manifestFile)
	}
	return g.checkForeign(runs)
}

// checkForeign fails when a run's folder holds a finished run made with
// other settings: the folder is another grid's, perhaps written by a
// single process (which keeps no grid.json). A run without run.json (not
// finished, or being written) is no evidence either way.
func (g Grid[S]) checkForeign(runs []*Run[S]) error {
	for _, r := range runs {
		fp, ok := storedFingerprint(r.Dir)
		if ok && fp != g.fingerprint(r) {
			return fmt.Errorf("experiment: %s was made with other settings than this grid's (fingerprint %q, want %q): "+
				"give another output folder, or remove this one", filepath.Join(r.Dir, runFile), fp, g.fingerprint(r))
		}
	}
	return nil
}

// checkStray fails, naming them, when Dir holds folders that are no run of
// the grid (nor lead to one): runs of other seeds or settings, or anything
// else, which a report made from the grid would silently leave out. The
// runs' own folders are not looked into, and files are no concern.
func (g Grid[S]) checkStray(runs []*Run[S]) error {
	want := map[string]bool{} // run folders: true; the folders on the way to them: false
	for _, r := range runs {
		rel, err := filepath.Rel(g.Dir, r.Dir)
		if err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		want[rel] = true
		for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
			if _, ok := want[d]; !ok {
				want[d] = false
			}
		}
	}
	var stray []string
	err := filepath.WalkDir(g.Dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == g.Dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if !e.IsDir() || p == g.Dir {
			return nil
		}
		rel, _ := filepath.Rel(g.Dir, p)
		isRun, ok := want[rel]
		if !ok {
			stray = append(stray, filepath.ToSlash(rel))
		}
		if !ok || isRun {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("experiment: looking for runs in %s: %w", g.Dir, err)
	}
	if len(stray) == 0 {
		return nil
	}
	return fmt.Errorf("experiment: %s holds %d %s that %s no run of this grid: %s; a report of this grid would leave %s out: "+
		"move %s out of %s, or give the settings and seeds %s made with",
		g.Dir, len(stray), plural(len(stray), "folder", "folders"), plural(len(stray), "is", "are"), listSome(stray, 5),
		plural(len(stray), "it", "them"), plural(len(stray), "it", "them"), g.Dir, plural(len(stray), "it was", "they were"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// listSome joins the first n of names, saying how many more there are.
func listSome(names []string, n int) string {
	list := strings.Join(names[:min(n, len(names))], ", ")
	if len(names) > n {
		list += fmt.Sprintf(", and %d more", len(names)-n)
	}
	return list
}

func readManifest(path string) (*manifest, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var m manifest
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err == nil && (m.Grid == "" || m.Shards < 1) {
		err = fmt.Errorf("no grid key or shard count")
	}
	if err != nil {
		return nil, fmt.Errorf("experiment: %s cannot be read (%v): it records which grid the folder holds; remove it only if no worker is running", path, err)
	}
	return &m, nil
}

// createManifest makes path hold m unless another worker made it first,
// and returns what path holds.
func createManifest(path string, m manifest) (*manifest, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if _, err := createOnce(path, m); err != nil {
		return nil, err
	}
	return readManifest(path)
}

// createOnce makes path hold v as JSON unless it exists: created is false
// when another worker made it first. The file appears whole or not at all,
// and never replaces one, also on a shared file system (a hard link of a
// finished temporary file, where O_EXCL is not atomic on every NFS).
func createOnce(path string, v any) (created bool, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	err = json.NewEncoder(tmp).Encode(v)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	switch err := os.Link(tmp.Name(), path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		return false, fmt.Errorf("experiment: cannot create %s: %w", path, err)
	}
}

// reporter is what reporterFile holds.
type reporter struct {
	Shard string `json:"shard"` // "i/n"
}

// clearStaleReport removes the claim on the report when this shard has a
// run to train: the grid's results change, so a new report is due. No
// shard can claim the new one before this shard's runs are finished.
func (g Grid[S]) clearStaleReport(runs []*Run[S], mine []int) error {
	for _, k := range mine {
		if fp, ok := storedFingerprint(runs[k].Dir); !ok || fp != g.fingerprint(runs[k]) {
			err := os.Remove(filepath.Join(g.Dir, reporterFile))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("experiment: %w", err)
			}
			return nil
		}
	}
	return nil
}

// claimReport returns the shard that makes the report of the finished
// grid: this one if it is the first to claim it, or if it claimed it
// before (started again, perhaps because its report failed).
func (g Grid[S]) claimReport() (Shard, error) {
	path := filepath.Join(g.Dir, reporterFile)
	if _, err := createOnce(path, reporter{Shard: g.Shard.String()}); err != nil {
		return Shard{}, err
	}
	raw, err := os.ReadFile(path)
	var r reporter
	if err == nil {
		err = json.Unmarshal(raw, &r)
	}
	var s Shard
	if err == nil {
		s, err = ParseShard(r.Shard)
	}
	if err != nil {
		return Shard{}, fmt.Errorf("experiment: %s cannot be read (%v): it records which shard makes the report; remove it, or run with -merge", path, err)
	}
	return s, nil
}

// gather reads from Dir every run another shard trains, and returns all
// runs when every one is there.
func (g Grid[S]) gather(runs []*Run[S], mine []int) ([]*Run[S], error) {
	own := map[int]bool{}
	for _, k := range mine {
		own[k] = true
	}
	var missing []string
	for k, r := range runs {
		if own[k] {
			continue
		}
		ok, err := r.load(g.fingerprint(r), g.Metrics)
		if err != nil {
			return nil, fmt.Errorf("%s seed %d: %w", r.Name, r.Seed, err)
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%s seed %d", r.Name, r.Seed))
		}
	}
	switch {
	case len(missing) == 0 && (g.Merge || g.Shared):
		return runs, nil
	case len(missing) == 0:
		// Every run is finished: more than one shard may see it at once,
		// and the first to claim the report makes it.
		reporter, err := g.claimReport()
		if err != nil || reporter == g.Shard {
			return runs, err
		}
		return nil, &IncompleteError{Shard: g.Shard, Present: len(runs), Total: len(runs), Reporter: reporter}
	case g.Merge:
		return nil, fmt.Errorf("experiment: merge: %d of the grid's %d runs are not finished in %s: %s (a shard still running, failed, or not started)",
			len(missing), len(runs), g.Dir, listSome(missing, 5))
	}
	return nil, &IncompleteError{Shard: g.Shard, Present: len(runs) - len(missing), Total: len(runs)}
}
