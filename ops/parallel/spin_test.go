package parallel

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestSpinFromEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":        DefaultSpin,
		"0":       0,
		" 250 ":   250 * time.Microsecond,
		"1000000": time.Second,
		"1000001": DefaultSpin, // more than a second
		"-1":      DefaultSpin,
		"1.5":     DefaultSpin,
		"off":     DefaultSpin,
	} {
		if got := spinFromEnv(v); got != want {
			t.Errorf("GELU_SPIN_US=%q: %v, want %v", v, got, want)
		}
	}
}

// Every spin time, 0 included, keeps For's results: each index once.
func TestSetSpin(t *testing.T) {
	defer SetSpin(Spin())
	for _, bad := range []time.Duration{-time.Nanosecond, time.Second + 1} {
		if err := SetSpin(bad); err == nil {
			t.Errorf("SetSpin(%v): no error", bad)
		}
	}
	for _, d := range []time.Duration{0, time.Microsecond, DefaultSpin} {
		if err := SetSpin(d); err != nil || Spin() != d {
			t.Fatalf("SetSpin(%v): %v, Spin() = %v", d, err, Spin())
		}
		const n = 1 << 16
		var seen [n]atomic.Int32
		for range 20 {
			For(n, 1<<10, Func(func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			}))
		}
		for i := range seen {
			if c := seen[i].Load(); c != 20 {
				t.Fatalf("spin %v: index %d visited %d times in 20 loops, want 20", d, i, c)
			}
		}
	}
}
