package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 3}} {
		in := append([]float64(nil), c.v...)
		if got := Median(c.v); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.v, got, c.want)
		}
		if !slices.Equal(in, c.v) {
			t.Errorf("Median reordered its input: %v, was %v", c.v, in)
		}
	}
}

func TestPeakRSS(t *testing.T) {
	status := "Name:\tx\nVmPeak:\t  9999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n"
	if got := peakRSS(strings.NewReader(status)); got != 2 {
		t.Errorf("peakRSS(VmHWM 2048 kB) = %v MB, want 2", got)
	}
	if got := peakRSS(strings.NewReader("Name:\tx\n")); got != 0 {
		t.Errorf("peakRSS without VmHWM = %v, want 0", got)
	}
}

// TestTime: Warmup runs, then reps timed ones; a failing run is the error.
func TestTime(t *testing.T) {
	calls := 0
	res, err := Time(func() error { calls++; return nil }, 3, 5)
	if err != nil || calls != Warmup+5 || !(res.Seconds > 0) || res.BLAS == "" {
		t.Errorf("Time: %d calls, %+v (%v); want %d calls, seconds > 0 and the BLAS named", calls, res, err, Warmup+5)
	}
	boom := errors.New("boom")
	if _, err := Time(func() error { return boom }, 1, 1); !errors.Is(err, boom) {
		t.Errorf("Time of a failing run: %v, want boom", err)
	}
	if _, err := Time(func() error { return nil }, 0, 1); err == nil {
		t.Error("Time with 0 steps: no error")
	}
}

func TestRunChild(t *testing.T) {
	calls := 0
	fs := Families{{Name: "count", Unit: "ms", Build: func(args string, dt tensor.Dtype) (func() error, int, error) {
		if args != "ok" {
			return nil, 0, errors.New("want ok")
		}
		return func() error { calls++; return nil }, 1, nil
	}}}
	var out bytes.Buffer
	if err := runChild(&out, fs, "count/ok/float32", 3); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !(res.Seconds > 0) || calls != Warmup+3 {
		t.Errorf("child printed %q (%v) after %d calls, want a Result with seconds > 0 after %d", out.String(), err, calls, Warmup+3)
	}
	if r, err := decodeResult("count/ok/float32", out.Bytes()); err != nil || r != res {
		t.Errorf("decodeResult = %+v (%v), want %+v", r, err, res)
	}
	// A Fastest family reports the fastest of FastestReps timed runs:
	// timed runs sleeping 2 ms but for the third, which returns at once,
	// give a median of at least 2 ms and a fastest under 1 ms.
	for _, fastest := range []bool{false, true} {
		calls := 0
		fs := Families{{Name: "sleep", Unit: "ms", Fastest: fastest, Build: func(string, tensor.Dtype) (func() error, int, error) {
			return func() error {
				if calls++; calls != Warmup+3 {
					time.Sleep(2 * time.Millisecond)
				}
				return nil
			}, 1, nil
		}}}
		out.Reset()
		if err := runChild(&out, fs, "sleep/x/float32", 3); err != nil {
			t.Fatal(err)
		}
		wantCalls := map[bool]int{false: Warmup + 3, true: Warmup + FastestReps}[fastest]
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || calls != wantCalls || (res.Seconds < 1e-3) != fastest || (!fastest && res.Seconds < 2e-3) {
			t.Errorf("Fastest %v: %v s after %d runs (%v), want %d runs and %s", fastest, res.Seconds, calls, err, wantCalls,
				map[bool]string{false: "the median, ≥ 2 ms", true: "the fastest, < 1 ms"}[fastest])
		}
	}
	for _, bad := range []string{"count/no/float32", "nope/ok/float32"} {
		if err := runChild(&out, fs, bad, 1); err == nil {
			t.Errorf("runChild(%q): no error", bad)
		}
	}
	for _, bad := range []string{"", "{}", `{"seconds": 0}`, "not json"} {
		if _, err := decodeResult("w", []byte(bad)); err == nil {
			t.Errorf("decodeResult(%q): no error", bad)
		}
	}
}

func TestChild(t *testing.T) {
	t.Setenv(ChildEnv, "")
	if _, ok := Child(testFamilies); ok {
		t.Error("Child without " + ChildEnv + ": ok")
	}
	t.Setenv(ChildEnv, "gelu/exact/float32")
	t.Setenv(ChildRepsEnv, "0")
	if code, ok := Child(testFamilies); !ok || code != 1 {
		t.Errorf("Child with %s=0: code %d, ok %v; want 1, true", ChildRepsEnv, code, ok)
	}
}
