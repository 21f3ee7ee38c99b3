package report

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/internal/testutil"
)

func readCSV(t *testing.T, p string) [][]string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Numbers survive a round trip bit for bit; special values are spelled out.
func TestWriteCSVFullPrecision(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	vals := []float64{0.1, 1.0 / 3, -0.7517915241, 5e-324, math.MaxFloat64}
	rows := [][]any{}
	for i, v := range vals {
		rows = append(rows, []any{i, v, float32(v), "a,\"b\""})
	}
	rows = append(rows, []any{nil, math.NaN(), float32(math.Inf(-1)), true})
	if err := WriteCSV(p, []string{"i", "f64", "f32", "s"}, rows); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, p)
	if len(recs) != len(rows)+1 || strings.Join(recs[0], ",") != "i,f64,f32,s" {
		t.Fatalf("read %v", recs)
	}
	for i, v := range vals {
		got, err := strconv.ParseFloat(recs[i+1][1], 64)
		if err != nil || got != v {
			t.Errorf("row %d: %q parses to %v, want %v exactly", i, recs[i+1][1], got, v)
		}
		g32, err := strconv.ParseFloat(recs[i+1][2], 32)
		if err != nil || float32(g32) != float32(v) {
			t.Errorf("row %d: float32 %q parses to %v, want %v", i, recs[i+1][2], g32, float32(v))
		}
		if recs[i+1][3] != `a,"b"` {
			t.Errorf("row %d: string cell %q", i, recs[i+1][3])
		}
	}
	if last := recs[len(recs)-1]; strings.Join(last, "|") != "|NaN|-Inf|true" {
		t.Errorf("special values written as %q", last)
	}
}

func TestCSVWriterRowByRow(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "metrics.csv")
	w, err := CreateCSV(p, "step", "loss")
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 3; step++ {
		if err := w.Write(step, 1/float64(step)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("metrics.csv visible before Close")
	}
	if w.Rows() != 3 {
		t.Errorf("Rows = %d, want 3", w.Rows())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if recs := readCSV(t, p); len(recs) != 4 || recs[3][1] != "0.3333333333333333" {
		t.Errorf("read %v", recs)
	}
	if err := w.Write(4, 0.25); err == nil {
		t.Error("Write after Close: no error")
	}
}

func TestCSVBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, h := range [][]string{nil, {"a", ""}, {"a", "a"}} {
		if _, err := CreateCSV(filepath.Join(dir, "h.csv"), h...); err == nil {
			t.Errorf("header %q: no error", h)
		}
	}
	p := filepath.Join(dir, "bad.csv")
	w, _ := CreateCSV(p, "a", "b")
	err := w.Write(1)
	if err == nil || !strings.Contains(err.Error(), "1 cells, want 2") {
		t.Errorf("short row: error %v", err)
	}
	if err := w.Write(1, map[int]int{}); err == nil {
		t.Error("later writes after a failure should keep failing")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed Write: no error")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("a CSV with a failed row was committed")
	}
	err = WriteCSV(filepath.Join(dir, "c.csv"), []string{"a"}, [][]any{{struct{}{}}})
	if err == nil || !strings.Contains(err.Error(), "unsupported cell type struct {}") {
		t.Errorf("bad cell type: error %v", err)
	}
	if names := testutil.ListDir(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v, want nothing", names)
	}
}
