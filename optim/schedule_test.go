package optim_test

// Schedules at chosen steps against their closed forms, worked out by hand
// where the numbers allow it.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/optim"
)

func must(s optim.Schedule, err error) optim.Schedule {
	if err != nil {
		panic(err)
	}
	return s
}

func TestSchedulesAtChosenSteps(t *testing.T) {
	cases := []struct {
		s     optim.Schedule
		steps []int
		want  []float64
	}{
		{must(optim.Constant(0.3)), []int{-5, 0, 1, 1000}, []float64{0.3, 0.3, 0.3, 0.3}},
		// ×0.5 every 3 steps: powers of two, exact.
		{must(optim.StepLR(0.1, 3, 0.5)), []int{0, 2, 3, 5, 6, 9, 30}, []float64{0.1, 0.1, 0.05, 0.05, 0.025, 0.0125, 0.1 / 1024}},
		// (t+1)/4 of 1 over steps 0..3, then 1.
		{must(optim.Warmup(must(optim.Constant(1)), 4)), []int{-1, 0, 1, 2, 3, 4, 100}, []float64{0.25, 0.25, 0.5, 0.75, 1, 1, 1}},
		// cos(π·t/4): 1, √2/2, 0, −√2/2, −1 → (1+c)/2.
		{must(optim.Cosine(1, 4, 0)), []int{0, 1, 2, 3, 4, 7}, []float64{1, (1 + math.Sqrt2/2) / 2, 0.5, (1 - math.Sqrt2/2) / 2, 0, 0}},
		{must(optim.Cosine(0.1, 2, 0.02)), []int{0, 1, 2, 3}, []float64{0.1, 0.06, 0.02, 0.02}},
		{must(optim.LinearDecay(1, 4, 0.2)), []int{0, 1, 2, 4, 9}, []float64{1, 0.8, 0.6, 0.2, 0.2}},
		// Warmup multiplies the undelayed schedule: step 1 of Cosine(1, 4, 0) times 2/3.
		{must(optim.Warmup(must(optim.Cosine(1, 4, 0)), 3)), []int{0, 1, 2, 3}, []float64{1.0 / 3, 2.0 / 3 * (1 + math.Sqrt2/2) / 2, 0.5, (1 - math.Sqrt2/2) / 2}},
		{must(optim.Warmup(must(optim.Constant(0.5)), 0)), []int{0}, []float64{0.5}},
	}
	for _, c := range cases {
		for i, step := range c.steps {
			if got := c.s.LR(step); math.Abs(got-c.want[i]) > 1e-15 {
				t.Errorf("%v at step %d: %.17g, want %.17g", c.s, step, got, c.want[i])
			}
		}
	}
}

func TestScheduleValidation(t *testing.T) {
	nan := math.NaN()
	constant := must(optim.Constant(1))
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"negative lr", func() error { _, err := optim.Constant(-1); return err }, "learning rate -1"},
		{"NaN lr", func() error { _, err := optim.StepLR(nan, 1, 0.5); return err }, "learning rate NaN"},
		{"step size 0", func() error { _, err := optim.StepLR(1, 0, 0.5); return err }, "step size 0"},
		{"gamma 0", func() error { _, err := optim.StepLR(1, 2, 0); return err }, "gamma 0"},
		{"gamma Inf", func() error { _, err := optim.StepLR(1, 2, math.Inf(1)); return err }, "gamma +Inf"},
		{"nil warmup", func() error { _, err := optim.Warmup(nil, 3); return err }, "nil schedule"},
		{"negative warmup", func() error { _, err := optim.Warmup(constant, -2); return err }, "-2 steps"},
		{"cosine total 0", func() error { _, err := optim.Cosine(1, 0, 0); return err }, "total steps 0"},
		{"cosine min > lr", func() error { _, err := optim.Cosine(1, 10, 2); return err }, "final learning rate 2"},
		{"cosine min NaN", func() error { _, err := optim.Cosine(1, 10, nan); return err }, "final learning rate NaN"},
		{"linear end < 0", func() error { _, err := optim.LinearDecay(1, 10, -0.1); return err }, "final learning rate -0.1"},
		{"linear total < 0", func() error { _, err := optim.LinearDecay(1, -3, 0); return err }, "total steps -3"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
}

func TestSchedulesPrintTheirArguments(t *testing.T) {
	s := must(optim.Warmup(must(optim.Cosine(0.001, 1000, 0)), 100))
	if got, want := fmt.Sprint(s), "Warmup(Cosine(lr=0.001, total=1000, min=0), steps=100)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// NanoGPTCosine at the points where nanoGPT's get_lr has closed values:
// the first warmup step is lr/(warmup+1), the warmup's end is lr, the
// cosine's midpoint is the mean of lr and minLR, its end minLR, and minLR
// after.
func TestNanoGPTCosine(t *testing.T) {
	const lr, minLR = 1e-3, 1e-4
	s, err := optim.NanoGPTCosine(lr, minLR, 100, 2000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		step int
		want float64
	}{
		{-3, lr / 101}, {0, lr / 101}, {49, lr * 50 / 101}, {99, lr * 100 / 101},
		{100, lr}, {1050, (lr + minLR) / 2}, {2000, minLR}, {2001, minLR}, {math.MaxInt, minLR},
	} {
		if got := s.LR(c.step); math.Abs(got-c.want) > 1e-18 {
			t.Errorf("step %d: %v, want %v", c.step, got, c.want)
		}
	}
	// The cosine quarter point: minLR + (lr−minLR)·(1 + cos(π/4))/2.
	if got, want := s.LR(100+475), minLR+(lr-minLR)*(1+math.Sqrt2/2)/2; math.Abs(got-want) > 1e-18 {
		t.Errorf("quarter point: %v, want %v", got, want)
	}
	for _, bad := range [][2]int{{-1, 10}, {10, 10}, {11, 10}} {
		if _, err := optim.NanoGPTCosine(lr, minLR, bad[0], bad[1]); err == nil {
			t.Errorf("warmup %d, decay %d: no error", bad[0], bad[1])
		}
	}
	if _, err := optim.NanoGPTCosine(lr, 2*lr, 10, 100); err == nil {
		t.Error("minLR > lr: no error")
	}
}
