package experiment

// What the workers of a sharded grid agree on before any of them trains:
// grid.json in the grid's folder records which grid the folder holds and
// into how many shards it is split. The first worker creates it (a hard
// link of a finished temporary file, which fails rather than replace a
// file another worker made first); every later one checks it.

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

const manifestFile = "grid.json"

type manifest struct {
	Grid   string `json:"grid"`   // gridKey: the fingerprint, metrics and every run's name and seed
	Runs   int    `json:"runs"`   // for the error messages
	Shards int    `json:"shards"` // the number of workers
}

// ErrIncomplete is what a shard's Grid.Run returns (wrapped in an
// *IncompleteError) when it has trained its runs but other shards' runs
// are not all finished yet: not a failure of this worker.
var ErrIncomplete = errors.New("experiment: the grid's other shards have not finished")

// IncompleteError says how far a sharded grid is.
type IncompleteError struct {
	Shard          Shard
	Present, Total int // finished runs found in Dir, runs in the grid
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("shard %s done; %d of the grid's %d runs are finished: the last shard to finish, or a run with -merge, makes the report",
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
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+manifestFile+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	err = json.NewEncoder(tmp).Encode(m)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("experiment: cannot create %s: %w", path, err)
	}
	return readManifest(path)
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
	case len(missing) == 0:
		return runs, nil
	case g.Merge:
		const show = 5
		list := strings.Join(missing[:min(show, len(missing))], ", ")
		if len(missing) > show {
			list += fmt.Sprintf(", and %d more", len(missing)-show)
		}
		return nil, fmt.Errorf("experiment: merge: %d of the grid's %d runs are not finished in %s: %s (a shard still running, failed, or not started)",
			len(missing), len(runs), g.Dir, list)
	}
	return nil, &IncompleteError{Shard: g.Shard, Present: len(runs) - len(missing), Total: len(runs)}
}
