package experiment

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

// famRun is a run whose curve ends at loss (NaN: no finite value), or a
// diverged one.
func famRun(t *testing.T, seed uint64, loss float64, diverged string) *Run[string] {
	t.Helper()
	c := NewCurve("loss")
	if err := c.Add(10, loss); err != nil {
		t.Fatal(err)
	}
	return &Run[string]{Seed: seed, Curve: c, Diverged: diverged}
}

func TestFamilies(t *testing.T) {
	a := &Group[string]{Setting: "adam relu", Name: "a", Runs: []*Run[string]{famRun(t, 1, 0.5, ""), famRun(t, 2, 0.25, "loss is NaN"), famRun(t, 3, 0.75, "")}}
	b := &Group[string]{Setting: "adam gelu", Name: "b", Runs: []*Run[string]{famRun(t, 1, 0.125, "")}}
	c := &Group[string]{Setting: "sgd relu", Name: "c", Runs: []*Run[string]{famRun(t, 1, math.NaN(), "")}}
	gs := []*Group[string]{a, b, c}

	if g := FindGroup(gs, func(s string) bool { return s == "adam gelu" }); g != b {
		t.Errorf("FindGroup adam gelu: %v, want group b", g)
	}
	if g := FindGroup(gs, func(s string) bool { return s == "sgd gelu" }); g != nil {
		t.Errorf("FindGroup of a missing setting: %v, want nil", g)
	}
	if got := Only(gs, func(s string) bool { return s[:4] == "adam" }); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("Only adam: %v, want [a b]", got)
	}
	if got := DivergedRuns(append(append(a.Runs, b.Runs...), c.Runs...)); len(got) != 1 || got[0] != a.Runs[1] {
		t.Errorf("DivergedRuns: %v, want a's seed 2 only", got)
	}

	r, err := report.New(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	SetFinals(r, "a.", a, []string{"loss"})
	SetFinals(r, "c.", c, []string{"loss"}) // no finite value: nothing recorded
	// a's finite final losses are 0.5 and 0.75 (seed 2 diverged).
	for key, want := range map[string]float64{"a.final.loss.median": 0.625, "a.final.loss.min": 0.5, "a.final.loss.max": 0.75} {
		if got, ok := r.Float(key); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", key, got, ok, want)
		}
	}
	if _, ok := r.Float("c.final.loss.median"); ok {
		t.Error("c.final.loss.median recorded for a group without finite values")
	}
	d := Diff{Delta: -0.5, SE: 0.25, Lower: 3, P: 0.125}
	d.Set(r, "gelu", "val_loss")
	for key, want := range map[string]float64{"gelu.delta_val_loss": -0.5, "gelu.delta_val_loss_se": 0.25, "gelu.lower_seeds": 3, "gelu.p_value": 0.125} {
		if got, ok := r.Float(key); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", key, got, ok, want)
		}
	}

	cells := func(g *Group[string]) []any { return []any{g.Name} }
	if tab := SelectionTable([]string{"name"}, gs[:2], gs[:2], cells); len(tab.Header)+len(tab.Rows) != 0 {
		t.Errorf("nothing to choose: table %v, want empty", tab)
	}
	tab := SelectionTable([]string{"name"}, gs, []*Group[string]{b}, cells)
	want := [][]any{{"a", false}, {"b", true}, {"c", false}}
	if len(tab.Header) != 2 || tab.Header[1] != "chosen" || len(tab.Rows) != 3 {
		t.Fatalf("table %v, want header [name chosen] and rows %v", tab, want)
	}
	for i, row := range tab.Rows {
		if len(row) != 2 || row[0] != want[i][0] || row[1] != want[i][1] {
			t.Errorf("row %d: %v, want %v", i, row, want[i])
		}
	}
}
