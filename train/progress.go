package train

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a bar on a terminal, one line per evaluation elsewhere,
// and nothing when quiet. Timing appears only here, never in files.
// Epochs count from 0, as in the files and the hooks.
type progress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	t     *Trainer
	busy  time.Duration // time spent in training steps (evaluation excluded)
	count int           // rows, or tokens for a model of sequences, trained
	unit  string        // "samples" or "tokens"
}

func newProgress(t *Trainer) *progress {
	if t.Config.Quiet || (t.par != nil && t.par.rank != 0) {
		return nil // data-parallel: rank 0 speaks for all
	}
	p := &progress{w: t.Config.Progress, t: t, unit: "samples"}
	if t.tokens {
		p.unit = "tokens"
	}
	if p.w == nil {
		p.w = os.Stderr
	}
	return p
}

// start draws the bar, once the resumed step is known.
func (p *progress) start() {
	if p == nil {
		return
	}
	t := p.t
	total := t.Config.Epochs * t.stepsPerEpoch()
	if t.Config.MaxSteps > 0 && t.Config.MaxSteps < total {
		total = t.Config.MaxSteps
	}
	if f, ok := p.w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		p.bar.Set(t.step)
	}
}

// say prints a line about the run (resuming, say).
func (p *progress) say(format string, args ...any) {
	if p == nil {
		return
	}
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// rate is the training throughput, evaluation time excluded.
func (p *progress) rate() float64 {
	if s := p.busy.Seconds(); s > 0 {
		return float64(p.count) / s
	}
	return 0
}

func (p *progress) step(s StepInfo, count int, took time.Duration) {
	if p == nil {
		return
	}
	p.count += count
	p.busy += took
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("epoch %d of %d, loss %.4f, %.0f %s/s", s.Epoch, p.t.Config.Epochs, s.Loss, p.rate(), p.unit))
		p.bar.Add(1)
	}
}

// value formats a metric for the console: "–" when it was not measured.
func value(v float64, measured bool, format string) string {
	if !measured {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

func (p *progress) eval(e EvalInfo) {
	if p == nil {
		return
	}
	line := fmt.Sprintf("step %d epoch %d: train loss %s", e.Step, e.Epoch, value(e.TrainLoss, e.TrainSteps > 0, "%.4f"))
	if p.t.ValData != nil {
		line += ", val loss " + value(e.ValLoss, true, "%.4f")
		if p.t.Model.Task == Classification {
			line += ", val accuracy " + value(100*e.ValAccuracy, true, "%.2f%%")
		}
	}
	if p.count > 0 {
		line += fmt.Sprintf(" (%.0f %s/s)", p.rate(), p.unit)
	}
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) finish() {
	if p != nil && p.bar != nil {
		p.bar.Finish()
	}
}
