package experiment

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestTables(t *testing.T) {
	a := lrAct{0.1, "relu"}
	runs := []*Run[lrAct]{run(a, 1, []float64{4, 3}, []float64{0.5, 0.25}), run(a, 2, []float64{2, 1}, []float64{0.75, 0.5})}
	runs[0].Seconds, runs[0].Steps, runs[1].Resumed = 2, 10, true
	dir := t.TempDir()
	r, err := report.New(dir, "tables", report.WithCommand("test"))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCurves(r, "curves", runs, []string{"act", "seed", "step"}, func(r *Run[lrAct], step int) []any {
		return []any{r.Setting.Act, r.Seed, step}
	}); err != nil {
		t.Fatal(err)
	}
	if err := WriteBands(r, "bands", Groups(runs), []string{"act", "step"}, func(g *Group[lrAct], step int) []any {
		return []any{g.Setting.Act, step}
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := WriteTiming(filepath.Join(dir, "timing.csv"), runs); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"curves.csv": "act,seed,step,loss,err\nrelu,1,1,4,0.5\nrelu,1,2,3,0.25\nrelu,2,1,2,0.75\nrelu,2,2,1,0.5\n",
		"bands.csv": "act,step,loss_median,loss_min,loss_max,err_median,err_min,err_max\n" +
			"relu,1,3,2,4,0.625,0.5,0.75\nrelu,2,2,1,3,0.375,0.25,0.5\n",
		"timing.csv": "run,seed,steps,seconds,steps_per_second,resumed\nrelu/0.1,1,10,2,5,false\nrelu/0.1,2,0,0,,true\ntotal,,,2,,\n",
	} {
		got, _ := os.ReadFile(filepath.Join(dir, file))
		if string(got) != want {
			t.Errorf("%s:\n%s\nwant\n%s", file, got, want)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "[curves.csv](curves.csv)") {
		t.Errorf("report.md does not link curves.csv:\n%s", md)
	}
}

func TestMedianPivot(t *testing.T) {
	// Cell (i, j) holds the errors of three seeds; row 1, column 0 has a
	// diverged seed (NaN), left out of the median and the range.
	cells := [][][]float64{
		{{0.02, 0.04, 0.03}, {0.05, 0.01, 0.09}},
		{{0.10, math.NaN(), 0.20}, {0.07, 0.07, 0.07}},
	}
	got := MedianPivot("activation", "test error (%)", []string{"ReLU", "GELU"}, []string{"Adam", "SGD"},
		func(i, j int) []float64 { return cells[i][j] }, 100)
	want := report.TableData{
		Header: []string{"activation", "Adam: test error (%), median", "Adam: min–max", "SGD: test error (%), median", "SGD: min–max"},
		Rows: [][]any{
			{"ReLU", 3.0, report.Format(2) + "–" + report.Format(4), 5.0, report.Format(1) + "–" + report.Format(9)},
			{"GELU", 15.0, report.Format(10) + "–" + report.Format(20), 7.0, report.Format(7) + "–" + report.Format(7)},
		},
	}
	if !slices.Equal(got.Header, want.Header) || len(got.Rows) != 2 {
		t.Fatalf("header %q, %d rows; want %q, 2 rows", got.Header, len(got.Rows), want.Header)
	}
	for i, row := range got.Rows {
		for k, v := range row {
			if f, ok := v.(float64); ok {
				if w := want.Rows[i][k].(float64); math.Abs(f-w) > 1e-12 {
					t.Errorf("row %d column %d: %v, want %v", i, k, f, w)
				}
			} else if v != want.Rows[i][k] {
				t.Errorf("row %d column %d: %v, want %v", i, k, v, want.Rows[i][k])
			}
		}
	}
}
