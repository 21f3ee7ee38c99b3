package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
)

// The same report written with Text, Section, Table and Plot and with one
// template must be the same bytes: a template is only another way to say
// where the blocks go.
func TestExecuteMatchesTheBlockCalls(t *testing.T) {
	rows := [][]any{{"a", 1.23456}, {"b", nil}}
	spec := PlotSpec{Title: "line", XLabel: "x", YLabel: "y", Caption: "A line, x = 1.", DPI: 30,
		Series: []Series{{Name: "y = x", X: []float64{0, 1}, Y: []float64{0, 1}}}}
	byCalls, byTemplate := t.TempDir(), t.TempDir()

	r, err := New(byCalls, "T", WithCommand("prog"))
	if err != nil {
		t.Fatal(err)
	}
	r.Text("Intro with 0.4559.")
	r.Section("Part")
	r.Text("Before the table:")
	r.Table("tab", []string{"name", "value"}, rows)
	r.Plot("fig", spec)
	r.Text("- one\n- two")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	tmpl, err := ParseTemplate("t", `Intro with {{num .X}}.

## Part
{{if .Show}}
Before the table:
{{end}}

{{table "tab" .Tab}}


{{plot "fig" (caption (render "cap" .) .Fig)}}
{{define "cap"}}
  A line, x = {{.One}}.
{{end}}
{{range .Items}}
- {{.}}
{{- end}}
`)
	if err != nil {
		t.Fatal(err)
	}
	r, err = New(byTemplate, "T", WithCommand("prog"))
	if err != nil {
		t.Fatal(err)
	}
	data := struct {
		X     float64
		Show  bool
		Tab   TableData
		Fig   PlotSpec
		Items []string
		One   float64
	}{0.45587, true, TableData{[]string{"name", "value"}, rows}, spec, []string{"one", "two"}, 1}
	data.Fig.Caption = ""
	if err := r.Execute(tmpl, data); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.md", "summary.json", "tab.csv", "fig.png"} {
		a, errA := os.ReadFile(filepath.Join(byCalls, f))
		b, errB := os.ReadFile(filepath.Join(byTemplate, f))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s differs (%v, %v):\n%s\n-- template --\n%s", f, errA, errB, a, b)
		}
	}
}

func TestExecuteErrors(t *testing.T) {
	r, err := New(t.TempDir(), "T")
	if err != nil {
		t.Fatal(err)
	}
	bad := template.Must(ParseTemplate("bad", `{{table "x" .T}}`))
	// A row with too few cells: the table's error, through the template.
	err = r.Execute(bad, map[string]TableData{"T": {[]string{"a", "b"}, [][]any{{1}}}})
	if err == nil || !strings.Contains(err.Error(), "row 0 has 1 cells, want 2") {
		t.Errorf("short row: %v", err)
	}
	// A field the data lacks.
	if err := r.Execute(template.Must(ParseTemplate("m", `{{.Missing}}`)), map[string]int{}); err == nil {
		t.Error("missing key: no error")
	}
	if err := r.Close(); err == nil || !strings.Contains(err.Error(), "row 0 has 1 cells") {
		t.Errorf("Close: %v, want the template's first error", err)
	}
	// table outside Execute.
	var b strings.Builder
	err = bad.Execute(&b, map[string]TableData{"T": {[]string{"a"}, nil}})
	if err == nil || !strings.Contains(err.Error(), "Report.Execute") {
		t.Errorf("table outside Execute: %v", err)
	}
}

func TestCaptureTakesTheBlocksBack(t *testing.T) {
	r, err := New(t.TempDir(), "T")
	if err != nil {
		t.Fatal(err)
	}
	r.Text("kept")
	md, err := r.Capture(func() error {
		r.Text("one")
		return r.Table("t", []string{"a"}, [][]any{{1}})
	})
	want := "one\n\n| a |\n| --- |\n| 1 |\n\nData: [t.csv](t.csv)"
	if err != nil || md != want {
		t.Errorf("Capture = %q, %v; want %q", md, err, want)
	}
	if len(r.blocks) != 1 || r.blocks[0] != "kept" {
		t.Errorf("blocks after Capture: %q", r.blocks)
	}
}

func TestTidy(t *testing.T) {
	for in, want := range map[string]string{
		"\n a\n  \n\n\n\tb \n\n":    "a\n\n\tb", // indentation is content
		"x\n\t\ny":                  "x\n\ny",
		"| t |\n\nData\n\n\n\nnext": "| t |\n\nData\n\nnext",
	} {
		if got := tidy(in); got != want {
			t.Errorf("tidy(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDescribeKeys(t *testing.T) {
	r, err := New(t.TempDir(), "T")
	if err != nil {
		t.Fatal(err)
	}
	err = r.DescribeKeys("# what the keys hold\n*.min_x where f attains   its minimum\n\n  gelu.d2_0 f''(0)\nlonely\n")
	if err == nil || !strings.Contains(err.Error(), `line 5 "lonely"`) {
		t.Errorf("DescribeKeys: %v, want line 5 named", err)
	}
	want := []keyDoc{{"*.min_x", "where f attains   its minimum"}, {"gelu.d2_0", "f''(0)"}}
	if len(r.docs) != 2 || r.docs[0] != want[0] || r.docs[1] != want[1] {
		t.Errorf("docs %q, want %q first", r.docs, want)
	}
}
