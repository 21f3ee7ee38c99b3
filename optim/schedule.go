package optim

// Learning-rate schedules: pure functions of the step number, so a resumed
// run gets the same rates without saving scheduler state.

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate of each step. Steps count from 0 (the
// first optimizer step); a negative step is treated as 0. Use it as
//
//	for step := 0; step < n; step++ {
//		opt.SetLR(sched.LR(step))
//		... opt.Step(params, grads) ...
//	}
//
// Schedules are closed forms (PyTorch's _get_closed_form_lr), not PyTorch's
// recursive per-step updates, which accumulate rounding differently.
type Schedule interface {
	LR(step int) float64
}

func checkScheduleLR(who string, lr float64) error {
	if !finite(lr) || lr < 0 {
		return fmt.Errorf("optim.%s: learning rate %v, want a finite value ≥ 0", who, lr)
	}
	return nil
}

type constant struct{ lr float64 }

// Constant returns the schedule lr at every step.
func Constant(lr float64) (Schedule, error) {
	if err := checkScheduleLR("Constant", lr); err != nil {
		return nil, err
	}
	return constant{lr}, nil
}

func (c constant) LR(int) float64 { return c.lr }
func (c constant) String() string { return fmt.Sprintf("Constant(%v)", c.lr) }

type stepLR struct {
	lr       float64
	stepSize int
	gamma    float64
}

// StepLR returns lr·gamma^⌊step/stepSize⌋, as torch.optim.lr_scheduler.StepLR
// stepped once per optimizer step: the rate is multiplied by gamma every
// stepSize steps. stepSize ≥ 1, gamma finite and > 0.
func StepLR(lr float64, stepSize int, gamma float64) (Schedule, error) {
	if err := checkScheduleLR("StepLR", lr); err != nil {
		return nil, err
	}
	if stepSize < 1 {
		return nil, fmt.Errorf("optim.StepLR: step size %d, want ≥ 1", stepSize)
	}
	if !finite(gamma) || gamma <= 0 {
		return nil, fmt.Errorf("optim.StepLR: gamma %v, want a finite value > 0", gamma)
	}
	return stepLR{lr, stepSize, gamma}, nil
}

func (s stepLR) LR(step int) float64 {
	return s.lr * math.Pow(s.gamma, float64(max(step, 0)/s.stepSize))
}

func (s stepLR) String() string {
	return fmt.Sprintf("StepLR(lr=%v, step_size=%d, gamma=%v)", s.lr, s.stepSize, s.gamma)
}

type warmup struct {
	s     Schedule
	steps int
}

// Warmup scales the schedule s linearly over its first steps steps: the
// rate at step t is s.LR(t)·(t+1)/steps for t < steps and s.LR(t) after.
// The first step therefore uses s.LR(0)/steps, and step steps−1 is the
// first at the full rate. s is not delayed: Warmup(Cosine(lr, T, 0), W)
// decays over the same T steps, the first W of them ramped.
//
// PyTorch's LinearLR(start_factor=1/steps, total_iters=steps) differs: its
// factor 1/steps + (1 − 1/steps)·t/steps reaches 1 at t = steps, one step
// later. steps = 0 returns s unchanged.
func Warmup(s Schedule, steps int) (Schedule, error) {
	if s == nil {
		return nil, fmt.Errorf("optim.Warmup: nil schedule")
	}
	if steps < 0 {
		return nil, fmt.Errorf("optim.Warmup: %d steps, want ≥ 0", steps)
	}
	if steps == 0 {
		return s, nil
	}
	return warmup{s, steps}, nil
}

func (w warmup) LR(step int) float64 {
	step = max(step, 0)
	lr := w.s.LR(step)
	if step < w.steps {
		return lr * float64(step+1) / float64(w.steps)
	}
	return lr
}

func (w warmup) String() string { return fmt.Sprintf("Warmup(%v, steps=%d)", w.s, w.steps) }

// decay falls from lr to end over total steps and stays at end after: the
// rate at step t ≤ total is end + (lr − end)·left(t, total), left going from
// 1 to 0.
type decay struct {
	name, endName string
	lr, end       float64
	total         int
	left          func(t, total float64) float64
}

func newDecay(name, endName string, lr float64, total int, end float64, left func(t, total float64) float64) (Schedule, error) {
	if err := checkDecay(name, lr, total, end); err != nil {
		return nil, err
	}
	return decay{name, endName, lr, end, total, left}, nil
}

func (d decay) LR(step int) float64 {
	t := min(max(step, 0), d.total)
	return d.end + (d.lr-d.end)*d.left(float64(t), float64(d.total))
}

func (d decay) String() string {
	return fmt.Sprintf("%s(lr=%v, total=%d, %s=%v)", d.name, d.lr, d.total, d.endName, d.end)
}

// Cosine returns CosineAnnealingLR's closed form
//
//	minLR + (lr − minLR)·(1 + cos(π·t/totalSteps))/2
//
// for steps t ≤ totalSteps, and minLR after. (PyTorch's scheduler does not
// stop at T_max: its rate climbs back towards lr over the next T_max
// steps.) totalSteps ≥ 1, 0 ≤ minLR ≤ lr.
func Cosine(lr float64, totalSteps int, minLR float64) (Schedule, error) {
	return newDecay("Cosine", "min", lr, totalSteps, minLR, func(t, total float64) float64 {
		return (1 + math.Cos(math.Pi*t/total)) / 2
	})
}

// LinearDecay returns endLR + (lr − endLR)·(totalSteps − t)/totalSteps for
// steps t ≤ totalSteps, and endLR after. totalSteps ≥ 1, 0 ≤ endLR ≤ lr.
func LinearDecay(lr float64, totalSteps int, endLR float64) (Schedule, error) {
	return newDecay("LinearDecay", "end", lr, totalSteps, endLR, func(t, total float64) float64 {
		return (total - t) / total
	})
}

func checkDecay(who string, lr float64, total int, end float64) error {
	if err := checkScheduleLR(who, lr); err != nil {
		return err
	}
	if total < 1 {
		return fmt.Errorf("optim.%s: total steps %d, want ≥ 1", who, total)
	}
	if !finite(end) || end < 0 || end > lr {
		return fmt.Errorf("optim.%s: final learning rate %v, want a finite value in [0, lr=%v]", who, end, lr)
	}
	return nil
}

type nanoGPTCosine struct {
	lr, minLR     float64
	warmup, decay int
}

// NanoGPTCosine is nanoGPT's get_lr (train.py): a linear warmup to lr over
// warmup steps that never starts at 0, then a cosine from lr down to minLR
// at decaySteps, and minLR after:
//
//	t < warmup:                lr·(t+1)/(warmup+1)
//	warmup ≤ t ≤ decaySteps:   minLR + (lr − minLR)·(1 + cos(π·(t − warmup)/(decaySteps − warmup)))/2
//	t > decaySteps:            minLR
//
// It differs from Warmup(Cosine(lr, decaySteps, minLR), warmup), whose
// cosine runs from step 0 and whose warmup starts at 0, by a few percent of
// lr in the first half of a short run. 0 ≤ warmup < decaySteps,
// 0 ≤ minLR ≤ lr.
func NanoGPTCosine(lr, minLR float64, warmup, decaySteps int) (Schedule, error) {
	if err := checkDecay("NanoGPTCosine", lr, decaySteps, minLR); err != nil {
		return nil, err
	}
	if warmup < 0 || warmup >= decaySteps {
		return nil, fmt.Errorf("optim.NanoGPTCosine: warmup %d steps with decay to step %d, want 0 ≤ warmup < decaySteps", warmup, decaySteps)
	}
	return nanoGPTCosine{lr, minLR, warmup, decaySteps}, nil
}

func (s nanoGPTCosine) LR(step int) float64 {
	t := max(step, 0)
	switch {
	case t < s.warmup:
		return s.lr * float64(t+1) / float64(s.warmup+1)
	case t > s.decay:
		return s.minLR
	}
	ratio := float64(t-s.warmup) / float64(s.decay-s.warmup)
	return s.minLR + 0.5*(1+math.Cos(math.Pi*ratio))*(s.lr-s.minLR)
}

func (s nanoGPTCosine) String() string {
	return fmt.Sprintf("NanoGPTCosine(lr=%v, min=%v, warmup=%d, decay=%d)", s.lr, s.minLR, s.warmup, s.decay)
}
