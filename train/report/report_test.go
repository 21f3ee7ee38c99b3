package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/internal/testutil"
)

// buildReport exercises every part of a Report in dir.
func buildReport(t *testing.T, dir string) *Report {
	t.Helper()
	r, err := New(dir, "Activation properties", WithCommand("/tmp/go-build1/b001/exe/activations", "-out", dir))
	if err != nil {
		t.Fatal(err)
	}
	r.Text("Measured on a grid.")
	r.Section("Minima")
	if err := r.Table("minima", []string{"activation", "min x", "min f", "note"}, [][]any{
		{"gelu", -0.7517915241, -0.1699713625, "a|b"},
		{"relu", math.NaN(), 0.0, nil},
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.Plot("f", sampleSpec()); err != nil {
		t.Fatal(err)
	}
	w, err := r.CSV("steps", "step", "loss")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(1, 0.5)
	w.Write(2, 0.25) // left open: Close commits it
	r.Describe("*.min_x", "where f attains its minimum")
	r.Describe("n", "grid size")
	for _, kv := range []struct {
		k string
		v any
	}{{"gelu.min_x", -0.7517915241}, {"relu.min_x", math.NaN()}, {"n", 20001}} {
		if err := r.Set(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Claim(Claim{Source: "doc 004", Claim: "minimum ≈ −0.17 at x ≈ −0.75", Measured: "−0.16997 at −0.75179", Verdict: Confirmed}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReportWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	r := buildReport(t, dir)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	names := testutil.ListDir(t, dir)
	if want := []string{"claims.csv", "f.png", "minima.csv", "report.md", "steps.csv", "summary.json"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	s := string(md)
	wantStart := "```sh\ngo run ./train/report -out " + dir + "\n```\n\n# Activation properties\n"
	if !strings.Contains(s, "go run ./") { // the test binary has its own package path
		t.Errorf("report.md does not start with the go run command:\n%s", s)
	}
	if !strings.HasPrefix(s, "```sh\n") || !strings.Contains(s, " -out "+dir+"\n```\n\n# Activation properties\n") {
		t.Errorf("report.md starts with\n%s\nwant something like\n%s", s[:min(len(s), 200)], wantStart)
	}
	for _, want := range []string{
		"| activation | min x | min f | note |\n| --- | --- | --- | --- |\n| gelu | -0.7518 | -0.1700 | a\\|b |\n| relu | NaN | 0 |  |\n",
		"Data: [minima.csv](minima.csv)",
		"![GELU and ReLU](f.png)",
		"Data: [steps.csv](steps.csv) (columns: step, loss)",
		"| doc 004 | minimum ≈ −0.17 at x ≈ −0.75 | −0.16997 at −0.75179 | **confirmed** |",
		"| `*.min_x` | where f attains its minimum |",
		"## Minima",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report.md lacks %q:\n%s", want, s)
		}
	}
	if strings.Index(s, "## Claims") > strings.Index(s, "Measured on a grid") {
		t.Error("claims should come right after the title")
	}
	if strings.Contains(s, "## Errors") {
		t.Errorf("report.md lists errors:\n%s", s)
	}

	raw, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	var sum struct {
		Command string
		Files   []string
		Keys    map[string]string
		Values  map[string]any
		Tables  map[string]struct {
			Columns []string
			Rows    [][]any
		}
		Claims []Claim
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatalf("summary.json: %v\n%s", err, raw)
	}
	if sum.Values["gelu.min_x"] != -0.7517915241 || sum.Values["relu.min_x"] != "NaN" || sum.Values["n"] != 20001.0 {
		t.Errorf("values %v", sum.Values)
	}
	if i, j := bytes.Index(raw, []byte(`"gelu.min_x"`)), bytes.Index(raw, []byte(`"relu.min_x"`)); i < 0 || j < i {
		t.Error("summary keys are not sorted")
	}
	if tb := sum.Tables["minima"]; len(tb.Rows) != 2 || tb.Rows[0][1] != -0.7517915241 || tb.Rows[1][1] != "NaN" {
		t.Errorf("table in summary.json: %+v", tb)
	}
	if len(sum.Claims) != 1 || sum.Claims[0].Verdict != Confirmed || sum.Keys["n"] != "grid size" || len(sum.Files) != 6 {
		t.Errorf("summary.json: %s", raw)
	}
	if recs := readCSV(t, filepath.Join(dir, "steps.csv")); len(recs) != 3 {
		t.Errorf("steps.csv: %v", recs)
	}
	if recs := readCSV(t, filepath.Join(dir, "claims.csv")); len(recs) != 2 || recs[1][3] != "confirmed" {
		t.Errorf("claims.csv: %v", recs)
	}
	if err := r.Close(); err == nil {
		t.Error("second Close: no error")
	}
	if err := r.Set("late", 1); err == nil {
		t.Error("Set after Close: no error")
	}
}

// The same calls give byte-identical files, PNGs included.
func TestReportIsDeterministic(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	for _, d := range []string{d1, d2} {
		r := buildReport(t, d)
		r.command = "fixed" // the command names the directory, which differs
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range testutil.ListDir(t, d1) {
		a, _ := os.ReadFile(filepath.Join(d1, name))
		b, err := os.ReadFile(filepath.Join(d2, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two identical runs", name)
		}
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	r, err := New(dir, "t", WithCommand("prog"))
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]any{{1}}
	checks := []struct {
		name string
		err  error
		want string
	}{
		{"ok table", r.Table("t1", []string{"a"}, rows), ""},
		{"duplicate table", r.Table("t1", []string{"a"}, rows), "already part of this report"},
		{"reserved name", r.Table("claims", []string{"a"}, rows), "already part of this report"},
		{"path in name", r.Table("../x", []string{"a"}, rows), "want letters"},
		{"exponent in name", r.Table("lr1e+21", []string{"a"}, rows), ""},
		{"space in name", r.Table("lr 1", []string{"a"}, rows), "want letters"},
		{"short row", r.Table("t2", []string{"a", "b"}, rows), "row 0 has 1 cells, want 2"},
		{"bad cell", r.Table("t3", []string{"a"}, [][]any{{[]int{1}}}), `column "a": unsupported cell type []int`},
		{"duplicate column", r.Table("t4", []string{"a", "a"}, nil), `"a" appears twice`},
		{"bad plot", r.Plot("p", PlotSpec{}), "no series"},
		{"ok set", r.Set("x.y", 1.5), ""},
		{"set twice", r.Set("x.y", 2.5), "set twice"},
		{"bad key", r.Set("a b", 1), "summary key"},
		{"bad value", r.Set("m", map[string]int{}), "unsupported value type"},
		{"nil value", r.Set("nil", nil), "unsupported value type"},
		{"bad pattern", r.Describe("[", "x"), "bad key pattern"},
		{"bad verdict", r.Claim(Claim{Claim: "c", Measured: "m", Verdict: "maybe"}), "verdict"},
		{"empty claim", r.Claim(Claim{Verdict: Confirmed}), "needs the claim"},
	}
	for _, c := range checks {
		if c.want == "" && c.err != nil {
			t.Errorf("%s: %v", c.name, c.err)
		}
		if c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
	// x.y has no Describe pattern: Close fails but still writes the report,
	// listing every error.
	err = r.Close()
	if err == nil || r.Err() == nil || !strings.Contains(err.Error(), "already part of this report") {
		t.Errorf("Close returned %v, want the first error", err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "## Errors") || !strings.Contains(string(md), "summary keys without a Describe pattern: x.y") {
		t.Errorf("report.md does not list the errors:\n%s", md)
	}
	// The failed tables left no files behind.
	if names := testutil.ListDir(t, dir); !slices.Equal(names, []string{"lr1e+21.csv", "report.md", "summary.json", "t1.csv"}) {
		t.Errorf("files %v", names)
	}
}

func TestNewRejectsUnusableDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	os.WriteFile(file, nil, 0o644)
	if _, err := New(filepath.Join(file, "out"), "t"); err == nil || !strings.Contains(err.Error(), "output directory") {
		t.Errorf("directory under a file: error %v", err)
	}
	if _, err := New("", "t"); err == nil {
		t.Error("empty directory name: no error")
	}
	r, err := New(filepath.Join(dir, "a", "b"), "t") // created on demand
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Command(), "report.test") {
		t.Errorf("command from os.Args = %q", r.Command())
	}
}

func TestFloatReadsBackSetValues(t *testing.T) {
	r, err := New(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	r.Set("a", 1.5)
	r.Set("n", 3)
	r.Set("nan", math.NaN())
	r.Set("s", "text")
	if v, ok := r.Float("a"); !ok || v != 1.5 {
		t.Errorf("Float(a) = %v, %v", v, ok)
	}
	if v, ok := r.Float("n"); !ok || v != 3 {
		t.Errorf("Float(n) = %v, %v", v, ok)
	}
	if v, ok := r.Float("nan"); !ok || !math.IsNaN(v) {
		t.Errorf("Float(nan) = %v, %v", v, ok)
	}
	if _, ok := r.Float("s"); ok {
		t.Error("a string read back as a number")
	}
	if _, ok := r.Float("missing"); ok {
		t.Error("a missing key read back")
	}
}

// SetValues stores values of several types under prefix, as summary.json
// shows them (JSON numbers, strings, arrays), and reports the first bad
// key in sorted order.
func TestSetValues(t *testing.T) {
	dir := t.TempDir()
	r, err := New(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	err = r.SetValues("config.", map[string]any{"epochs": 3, "blas": "gonum", "lr": []float64{0.1, 0.01}, "acts": []string{"relu", "gelu"}})
	if err != nil {
		t.Fatal(err)
	}
	r.Describe("config.*", "settings")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"config.epochs": 3.0, "config.blas": "gonum", "config.lr": []any{0.1, 0.01}, "config.acts": []any{"relu", "gelu"}}
	if !reflect.DeepEqual(s.Values, want) {
		t.Errorf("summary values %v, want %v", s.Values, want)
	}
	r, _ = New(t.TempDir(), "t")
	if err := r.SetValues("x.", map[string]any{"b ": 1, "a ": "s"}); err == nil || !strings.Contains(err.Error(), `"x.a "`) {
		t.Errorf("bad keys: error %v, want the first in sorted order, \"x.a \"", err)
	}
}

func TestGetAndSetAll(t *testing.T) {
	r, err := New(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetAll("gelu.", map[string]float64{"b": 2, "a": 1}); err != nil {
		t.Fatal(err)
	}
	r.Describe("gelu.*", "values")
	if r.Get("gelu.a") != 1 || r.Get("gelu.b") != 2 {
		t.Errorf("Get: %v, %v", r.Get("gelu.a"), r.Get("gelu.b"))
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close after good Gets: %v", err)
	}
	r, _ = New(t.TempDir(), "t")
	if err := r.SetAll("x.", map[string]float64{"a": 1, "a ": 2}); err == nil || !strings.Contains(err.Error(), `"x.a "`) {
		t.Errorf("bad key: %v", err)
	}
	r, _ = New(t.TempDir(), "t")
	r.Describe("x.*", "values")
	if v := r.Get("x.typo"); !math.IsNaN(v) {
		t.Errorf("Get of a missing key = %v, want NaN", v)
	}
	if err := r.Close(); err == nil || !strings.Contains(err.Error(), `"x.typo"`) {
		t.Errorf("Close after a bad Get: %v", err)
	}
}

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		got, want Verdict
	}{
		{VerdictOf(true), Confirmed}, {VerdictOf(false), NotConfirmed},
		{Near(0.4559, 0.42, 0.005), NotConfirmed}, {Near(0.4249, 0.42, 0.005), Confirmed},
		{Near(0.41, 0.42, 0.005), NotConfirmed}, {Near(math.NaN(), 0.42, 0.005), NotConfirmed},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// Methods on a nil Report, CSVWriter, AtomicFile or Summary return an error
// naming the constructor to use, or a zero value; none panics.
func TestNilReceiversAreErrors(t *testing.T) {
	var (
		r *Report
		c *CSVWriter
		a *AtomicFile
		s *Summary
	)
	for name, f := range map[string]func() error{
		"Report.Claim":     func() error { return r.Claim(Claim{}) },
		"Report.Err":       func() error { return r.Err() },
		"Report.Table":     func() error { return r.Table("t", nil, nil) },
		"Report.CSV":       func() error { _, err := r.CSV("c"); return err },
		"Report.Plot":      func() error { return r.Plot("p", PlotSpec{}) },
		"Report.Set":       func() error { return r.Set("k", 1) },
		"Report.SetAll":    func() error { return r.SetAll("k", nil) },
		"Report.SetValues": func() error { return r.SetValues("k", nil) },
		"Report.Describe":  func() error { return r.Describe("k", "d") },
		"Report.Close":     func() error { return r.Close() },
		"CSVWriter.Write":  func() error { return c.Write(1) },
		"CSVWriter.Close":  func() error { return c.Close() },
		"CSVWriter.Abort":  func() error { return c.Abort() },
		"AtomicFile.Write": func() error {
			_, err := a.Write([]byte("x"))
			return err
		},
		"AtomicFile.Commit": func() error { return a.Commit() },
	} {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("PANIC: %v", p)
				}
			}()
			err = f()
		}()
		if err == nil || !strings.Contains(err.Error(), "report: nil ") || !strings.Contains(err.Error(), "(use report.") {
			t.Errorf("%s on nil: got %v, want an error naming the constructor", name, err)
		}
	}
	r.Text("x")
	r.Section("x")
	if _, ok := r.Float("k"); ok || !math.IsNaN(r.Get("k")) || r.Dir() != "" || r.Command() != "" ||
		c.Rows() != 0 || c.Path() != "" || a.Path() != "" || a.Abort() != nil ||
		s.Undocumented() != nil {
		t.Error("a nil accessor returned a non-zero value")
	}
	if _, ok := s.Number("k"); ok {
		t.Error("nil Summary.Number reported a value")
	}
}
