package experiment

import (
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestFinalTable(t *testing.T) {
	// a: final losses 0.5, (diverged seed 2: 0.25), 0.75; b: 0.125.
	a := &Group[string]{Setting: "relu", Name: "a", Runs: []*Run[string]{famRun(t, 1, 0.5, ""), famRun(t, 2, 0.25, "loss is NaN"), famRun(t, 3, 0.75, "")}}
	b := &Group[string]{Setting: "gelu", Name: "b", Runs: []*Run[string]{famRun(t, 1, 0.125, "")}}
	r, err := report.New(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	f := FinalTable[string]{Header: []string{"name", "seeds"}, Row: func(g *Group[string]) []any { return []any{g.Name, len(g.Runs)} },
		Key: func(s string) string { return "adam." + s }, Metrics: []string{"loss"},
		Values:    map[string]func(string) any{"first_byte": func(s string) any { return int(s[0]) }},
		Summaries: map[string]func(*Group[string]) []float64{"spread": func(g *Group[string]) []float64 { return []float64{1, 2, 4}[:len(g.Runs)] }}}
	tab := f.Write(r, []*Group[string]{a, b})
	if len(tab.Header) != 2 || len(tab.Rows) != 2 || tab.Rows[0][0] != "a" || tab.Rows[0][1] != 3 || tab.Rows[1][0] != "b" || tab.Rows[1][1] != 1 {
		t.Errorf("table %v, want header [name seeds], rows [a 3] [b 1]", tab)
	}
	for key, want := range map[string]float64{
		"adam.relu.diverged": 1, "adam.gelu.diverged": 0,
		"adam.relu.final.loss.median": 0.625, "adam.relu.final.loss.min": 0.5, "adam.relu.final.loss.max": 0.75,
		"adam.gelu.final.loss.median": 0.125,
		"adam.relu.spread.median":     2, "adam.relu.spread.min": 1, "adam.relu.spread.max": 4, "adam.gelu.spread.median": 1,
		"adam.relu.first_byte": 'r', "adam.gelu.first_byte": 'g',
	} {
		if got, ok := r.Float(key); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", key, got, ok, want)
		}
	}
}
