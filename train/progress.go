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
type progress struct {
	w       io.Writer
	bar     *progressbar.ProgressBar
	t       *Trainer
	start   time.Time
	samples int
}

func newProgress(t *Trainer) *progress {
	if t.Config.Quiet {
		return nil
	}
	p := &progress{w: t.Config.Progress, t: t, start: time.Now()}
	if p.w == nil {
		p.w = os.Stderr
	}
	total := t.Config.Epochs * t.TrainData.NumBatches()
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
	return p
}

func (p *progress) rate() float64 {
	if s := time.Since(p.start).Seconds(); s > 0 {
		return float64(p.samples) / s
	}
	return 0
}

func (p *progress) step(s StepInfo) {
	if p == nil {
		return
	}
	p.samples += p.t.TrainData.BatchSize()
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f %.0f samples/s", s.Epoch+1, p.t.Config.Epochs, s.Loss, p.rate()))
		p.bar.Add(1)
	}
}

func (p *progress) eval(e EvalInfo) {
	if p == nil {
		return
	}
	line := fmt.Sprintf("step %d epoch %d: train loss %.4f", e.Step, e.Epoch+1, e.TrainLoss)
	if p.t.ValData != nil {
		line += fmt.Sprintf(", val loss %.4f", e.ValLoss)
		if p.t.Model.Task == Classification {
			line += fmt.Sprintf(", val accuracy %.2f%%", 100*e.ValAccuracy)
		}
	}
	line += fmt.Sprintf(" (%.0f samples/s)", p.rate())
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
