package main

// The runs as two grids (experiment.Grid, each resumable and shardable):
// the learning-rate selection, every MLP at every rate of -lrs with the
// first seed, and then each MLP at its chosen rate with the other seeds.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/geluproject/gelu/train/experiment"
)

// run trains the grids of c's runs (trainOne) and writes the report.
func run(ctx context.Context, c config) (*results, error) {
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	res, err := runGrids(ctx, c, d, func(r *runResult) error { return trainOne(ctx, c, d, r) })
	if err != nil {
		return nil, err
	}
	return res, writeReport(c, res)
}

// setting is what distinguishes the runs of one seed.
type setting struct {
	MLP string // a -mlp name
	LR  float64
}

type (
	runResult = experiment.Run[setting]
	group     = experiment.Group[setting]
)

// metrics are what every run records at each evaluation, in nats: the
// mean training loss since the previous evaluation and the validation
// loss.
var metrics = []string{"train_loss", "val_loss"}

// results is what the report shows.
type results struct {
	Data   data
	Select []*group     // the selection: per MLP and rate, the run of the first seed
	Chosen []*group     // per MLP, in -mlp order, its group of Select at the chosen rate
	Runs   []*runResult // the chosen rates with every seed: seeds outermost, then -mlp order
	All    []*runResult // every run of both grids, the selection first
}

// waitPoll is how often a worker waiting for the other shards' selection
// runs (-wait) looks for them.
var waitPoll = 30 * time.Second

// runGrids trains the selection grid and the chosen rates' grid with
// trainRun. Each MLP's rate is the one whose run of the first seed has the
// lowest final validation loss (among those that did not diverge), and
// that run is also the first seed's run of the second grid. A worker of a
// sharded grid whose share of the selection is done while others' is not
// waits for them with -wait, until ctx is cancelled; without, it returns
// an error wrapping experiment.ErrIncomplete (no failure: started again
// once every share is done, it goes on with the second grid).
func runGrids(ctx context.Context, c config, d data, trainRun func(*runResult) error) (*results, error) {
	gridProgress, _ := c.Flags.Progress(c.Quiet, c.Progress)
	grid := func(dir string, settings []setting, seeds []uint64) experiment.Grid[setting] {
		return experiment.Grid[setting]{Settings: settings, Seeds: seeds, Name: setting.dirName, Metrics: metrics, Dir: filepath.Join(c.Out, dir),
			Fingerprint: c.fingerprint(d), Resume: c.Resume, Workers: c.Workers, Shard: c.Part, Merge: c.Merge, Progress: gridProgress,
			Note: func(r *runResult) string { return fmt.Sprintf("val loss %.4f", r.Curve.Last("val_loss")) }}
	}
	var all []setting
	for _, m := range c.MLPs {
		for _, lr := range c.LRs {
			all = append(all, setting{m, lr})
		}
	}
	selection := grid("select", all, []uint64{c.Seed})
	selection.Shared = true // every shard goes on to the second grid with the chosen rates
	sel, err := selection.Run(trainRun)
	for seen := -1; c.Wait && errors.Is(err, experiment.ErrIncomplete); sel, err = selection.Run(trainRun) {
		var inc *experiment.IncompleteError
		if errors.As(err, &inc) && inc.Present != seen && gridProgress != nil {
			fmt.Fprintf(gridProgress, "waiting for the other shards: %d of the selection's %d runs are finished\n", inc.Present, inc.Total)
		}
		seen, selection.Progress = inc.Present, nil // its own runs, read back at each look, are not news
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the other shards' selection runs: %w", ctx.Err())
		case <-time.After(waitPoll):
		}
	}
	if errors.Is(err, experiment.ErrIncomplete) {
		return nil, fmt.Errorf("learning-rate selection: %w; once every shard has stopped, start this one again to train the chosen rates "+
			"with the other seeds (or give every worker -wait when all run at once)", err)
	}
	if err != nil {
		return nil, err
	}
	res := &results{Data: d, Select: experiment.Groups(sel), All: sel}
	res.Chosen = experiment.Best(res.Select, func(s setting) string { return s.MLP }, "val_loss")
	var chosen []setting
	for _, g := range res.Chosen {
		chosen, res.Runs = append(chosen, g.Setting), append(res.Runs, g.Runs[0])
	}
	if c.Seeds == 1 {
		return res, nil
	}
	more, err := grid("runs", chosen, experiment.SeedRange(c.Seed+1, c.Seeds-1)).Run(trainRun)
	if err != nil {
		return nil, err
	}
	res.Runs, res.All = append(res.Runs, more...), append(res.All, more...)
	return res, nil
}
