package bench

import (
	"fmt"
	"strings"
	"testing"
)

// TestRun runs two workloads on two fake sides for two rounds: every
// setting in order in round 1, then round 2 without the setting that was
// over Hopeless times slower than its side's best, and each setting's
// best round kept.
func TestRun(t *testing.T) {
	ws, err := testFamilies.ParseAll([]string{"ffn/8x4x16/float32", "gelu/exact/float32"})
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	round := map[string]int{}
	seconds := map[string]float64{"fast": 0.002, "slow": 0.002*Hopeless + 0.001, "close": 0.003}
	side := func(name string, settings ...string) Side {
		return Side{Name: name,
			Settings: func(w Workload) []Setting {
				var s []Setting
				for _, n := range settings {
					s = append(s, Setting{Name: n})
				}
				return s
			},
			Measure: func(w Workload, s Setting) (Result, error) {
				k := name + " " + w.Name + " " + s.Name
				calls = append(calls, k)
				round[k]++
				// the second round is 1 ms faster
				return Result{Seconds: seconds[s.Name] - 0.001*float64(round[k]-1)}, nil
			}}
	}
	var progress strings.Builder
	tl, err := Run(ws, []Side{side("A", "fast", "slow"), side("B", "close")}, 2, &progress)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"A ffn/8x4x16/float32 fast", "A ffn/8x4x16/float32 slow", "B ffn/8x4x16/float32 close",
		"A gelu/exact/float32 fast", "A gelu/exact/float32 slow", "B gelu/exact/float32 close",
		"A ffn/8x4x16/float32 fast", "B ffn/8x4x16/float32 close",
		"A gelu/exact/float32 fast", "B gelu/exact/float32 close",
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	// fast: 2 ms, then 1 ms; close: 3 ms, then 2 ms; slow ran once.
	for _, c := range []struct {
		side, w, s string
		want       float64
	}{{"A", "ffn/8x4x16/float32", "fast", 0.001}, {"A", "ffn/8x4x16/float32", "slow", 0.002*Hopeless + 0.001}, {"B", "gelu/exact/float32", "close", 0.002}} {
		if got := tl[c.side][c.w][c.s].Seconds; got != c.want {
			t.Errorf("%s %s %s: %v s, want %v", c.side, c.w, c.s, got, c.want)
		}
	}
	// One line per measurement: ffn in ms (seconds × 1000), gelu in Melem/s.
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d progress lines, want %d", len(lines), len(want))
	}
	if first := fmt.Sprintf("round 1  %-28s %-26s %-28s %10.4g ms", "ffn/8x4x16/float32", "A", "fast", 2.0); lines[0] != first {
		t.Errorf("first progress line %q, want %q", lines[0], first)
	}
	if !strings.HasSuffix(lines[3], fmt.Sprintf("%10.4g Melem/s", 4.194304/0.002)) {
		t.Errorf("gelu progress line %q, want %.4g Melem/s", lines[3], 4.194304/0.002)
	}
}

func TestRunError(t *testing.T) {
	ws, _ := testFamilies.ParseAll([]string{"ffn/8x4x16/float32"})
	s := Side{Name: "A", Settings: func(Workload) []Setting { return []Setting{{Name: "x"}} },
		Measure: func(Workload, Setting) (Result, error) { return Result{}, fmt.Errorf("broken") }}
	if _, err := Run(ws, []Side{s}, 1, &strings.Builder{}); err == nil || err.Error() != "broken" {
		t.Errorf("Run with a failing side: %v, want broken", err)
	}
}
