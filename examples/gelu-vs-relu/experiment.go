package main

// The whole experiment: check the settings, load the data, train (or, with
// -resume, reload) every run, then write the report.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

// results is what the tests check besides the files.
type results struct {
	Runs    []*runResult
	Groups  []*group
	Elapsed time.Duration
}

func run(c config) (*results, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.Progress == nil {
		c.Progress = os.Stderr
	}
	start := time.Now()
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	res := &results{}
	keys := plan(c)
	for i, k := range keys {
		if !c.Quiet {
			fmt.Fprintf(c.Progress, "[%d/%d] %s lr=%g %s seed %d\n", i+1, len(keys), k.Opt, k.LR, k.Act.Name(), k.Seed)
		}
		dir := filepath.Join(c.Out, k.dir())
		rr, err := loadRun(c, d, k, dir)
		if rr == nil && err == nil {
			if rr, err = trainRun(c, d, k, dir); err == nil {
				err = saveRun(c, d, rr, dir)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.dir(), err)
		}
		res.Runs = append(res.Runs, rr)
	}
	if err := writeTiming(c, res.Runs); err != nil {
		return nil, err
	}
	if res.Groups, err = writeReport(c, d, res.Runs); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start).Round(time.Second)
	return res, nil
}

func (c config) validate() error {
	bad := func(format string, a ...any) error { return fmt.Errorf(format, a...) }
	switch {
	case c.Epochs < 1 || c.Seeds < 1:
		return bad("-epochs %d -seeds %d: want both ≥ 1", c.Epochs, c.Seeds)
	case c.Layers < 1 || c.Width < 1 || c.Batch < 1 || c.EvalsPerEpoch < 1:
		return bad("-layers %d -width %d -batch %d -evals-per-epoch %d: want all ≥ 1", c.Layers, c.Width, c.Batch, c.EvalsPerEpoch)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return bad("-dropout %v: want 0 ≤ dropout < 1", c.Dropout)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return bad("-momentum %v: want 0 ≤ momentum < 1", c.Momentum)
	case c.Val < 0 || c.NTrain < 0 || c.NTest < 0 || c.DPI < 0:
		return bad("-val %d -n-train %d -n-test %d -dpi %d: want none negative", c.Val, c.NTrain, c.NTest, c.DPI)
	case len(c.Acts) == 0 || len(c.Opts) == 0:
		return bad("no activations or no optimizers given")
	case c.Out == "":
		return bad("-out is empty")
	}
	for i, o := range c.Opts {
		if o != "adam" && o != "sgd" {
			return bad("-opts: unknown optimizer %q, want adam or sgd", o)
		}
		if slices.Contains(c.Opts[:i], o) {
			return bad("-opts: %s given twice", o)
		}
		if len(c.lrs(o)) > 1 && c.Val == 0 {
			return bad("-%s-lr lists %d learning rates: choosing one needs a validation set, but -val is 0", o, len(c.lrs(o)))
		}
	}
	for i, a := range c.Acts {
		if slices.Contains(c.Acts[:i], a) {
			return bad("-acts: %s given twice", a.Name())
		}
	}
	return nil
}

func parseActs(s string) ([]ops.Activation, error) {
	var out []ops.Activation
	for _, name := range splitList(s) {
		a, err := ops.ParseActivation(name)
		if err != nil {
			return nil, fmt.Errorf("-acts: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

func parseFloats(flagName, s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) || slices.Contains(out, v) {
			return nil, fmt.Errorf("%s: %q, want distinct positive numbers separated by commas", flagName, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no value", flagName)
	}
	return out, nil
}

// fingerprint is every setting a run's result depends on; -resume reuses a
// run only when it matches.
func (c config) fingerprint(d *data, k runKey) string {
	return fmt.Sprintf("opt=%s lr=%g momentum=%g act=%s seed=%d epochs=%d batch=%d layers=%d width=%d dropout=%g "+
		"val=%d n-train=%d n-test=%d train=%d eval-steps=%v blas=%s",
		k.Opt, k.LR, c.Momentum, k.Act.Name(), k.Seed, c.Epochs, c.Batch, c.Layers, c.Width, c.Dropout,
		c.Val, c.NTrain, c.NTest, d.train.Len(), d.evalSteps, ops.BLASName())
}

type runFile struct {
	Fingerprint string `json:"fingerprint"`
	Steps       int    `json:"steps"`
	Diverged    string `json:"diverged,omitempty"`
}

// saveRun writes points.csv and then run.json, whose presence marks the
// run as finished.
func saveRun(c config, d *data, r *runResult, dir string) error {
	rows := make([][]any, len(r.Points))
	for i, p := range r.Points {
		rows[i] = p.cells()
	}
	if err := report.WriteCSV(filepath.Join(dir, "points.csv"), pointCols, rows); err != nil {
		return err
	}
	return report.WriteFileAtomic(filepath.Join(dir, "run.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(runFile{c.fingerprint(d, r.Key), r.Steps, r.Diverged})
	})
}

// loadRun returns the finished run in dir when -resume is on and its
// settings match; nil (and no error) when it must be trained.
func loadRun(c config, d *data, k runKey, dir string) (*runResult, error) {
	if !c.Resume {
		return nil, nil
	}
	raw, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, nil
	}
	var f runFile
	if json.Unmarshal(raw, &f) != nil || f.Fingerprint != c.fingerprint(d, k) {
		return nil, nil
	}
	fh, err := os.Open(filepath.Join(dir, "points.csv"))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(recs) == 0 || !slices.Equal(recs[0], pointCols) {
		return nil, fmt.Errorf("-resume: %s/points.csv is unreadable or has other columns (%v)", dir, err)
	}
	r := &runResult{Key: k, Steps: f.Steps, Diverged: f.Diverged, Resumed: true}
	for _, rec := range recs[1:] {
		v := make([]float64, len(rec))
		for i, s := range rec {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("-resume: %s/points.csv: %w", dir, err)
			}
		}
		r.Points = append(r.Points, point{int(v[0]), v[1], v[2], v[3], v[4], v[5], v[6], v[7]})
	}
	return r, r.align(d)
}

// writeTiming writes timing.csv: wall-clock times, which differ between
// reruns, so they stay out of report.md and summary.json.
func writeTiming(c config, runs []*runResult) error {
	var rows [][]any
	var total float64
	for _, r := range runs {
		rate := any(nil)
		if r.Seconds > 0 {
			rate = float64(r.Steps) / r.Seconds
		}
		total += r.Seconds
		rows = append(rows, []any{r.Key.Opt, r.Key.LR, r.Key.Act.Name(), r.Key.Seed, r.Steps, r.Seconds, rate, r.Resumed})
	}
	rows = append(rows, []any{"total", nil, nil, nil, nil, total, nil, nil})
	return report.WriteCSV(filepath.Join(c.Out, "timing.csv"),
		[]string{"optimizer", "lr", "activation", "seed", "steps", "seconds", "steps_per_second", "resumed"}, rows)
}

// splitList splits a comma-separated flag value, ignoring blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
