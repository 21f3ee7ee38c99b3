package graph_test

import (
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

// Profile counts every op of every profiled Run once; the ops' times are
// nested inside the Runs', so they add up to at most the Runs' wall time;
// the table is sorted, most time first; stopping keeps the table, starting
// again clears it.
func TestProfile(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		m, _, _ := residualMLP(t, dt)
		if _, err := m.Profiled(); err == nil {
			t.Errorf("%v: Profiled before Profile(true): no error", dt)
		}
		if err := m.Run(); err != nil { // not profiled
			t.Fatal(err)
		}
		if err := m.Profile(true); err != nil {
			t.Fatal(err)
		}
		var wall time.Duration
		for range 3 {
			t0 := time.Now()
			if err := m.Run(); err != nil {
				t.Fatal(err)
			}
			wall += time.Since(t0)
		}
		if err := m.Profile(false); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(); err != nil { // not profiled
			t.Fatal(err)
		}
		ts, err := m.Profiled()
		if err != nil {
			t.Fatal(err)
		}
		var sum time.Duration
		var ops []string
		for i, o := range ts {
			if o.Calls != 3 {
				t.Errorf("%v: %s (%s) ran %d times while profiled, want 3", dt, o.Node, o.Op, o.Calls)
			}
			if i > 0 && o.Total > ts[i-1].Total {
				t.Errorf("%v: row %d (%v) after row %d (%v): not sorted", dt, i, o.Total, i-1, ts[i-1].Total)
			}
			sum += o.Total
			ops = append(ops, o.Op)
		}
		if sum > wall {
			t.Errorf("%v: ops took %v in all, more than the runs' %v", dt, sum, wall)
		}
		for _, want := range []string{"gelu", "cross_entropy", "matmul"} {
			if !strings.Contains(strings.ToLower(strings.Join(ops, " ")), want) {
				t.Errorf("%v: no %q op among %q", dt, want, ops)
			}
		}
		if err := m.Profile(true); err != nil {
			t.Fatal(err)
		}
		if ts, _ := m.Profiled(); len(ts) != 0 {
			t.Errorf("%v: after Profile(true) again, %d rows, want none", dt, len(ts))
		}
	}
}

func TestProfiledRunAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m, _, _ := residualMLP(t, tensor.Float32)
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if err := m.Profile(true); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(10, func() {
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a profiled Run allocates %v times, want 0", n)
	}
}
