package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"text/template"
)

// TestFinish renders a two-line template, documents the one key from
// keys.txt and checks report.md and summary.json; a template that fails
// leaves no report.md behind.
func TestFinish(t *testing.T) {
	fsys := fstest.MapFS{
		"report.md.tmpl": {Data: []byte("Loss {{num .Loss}}.\n")},
		"keys.txt":       {Data: []byte("# a comment\nloss the final loss\n")},
	}
	tmpl := template.Must(ParseTemplateFS(fsys))
	dir := t.TempDir()
	r, err := New(dir, "T")
	if err != nil {
		t.Fatal(err)
	}
	r.Set("loss", 0.25)
	if err := r.Finish(tmpl, struct{ Loss float64 }{0.25}, fsys); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	// num shows 4 significant digits; the key's description comes from keys.txt.
	if err != nil || !strings.Contains(string(md), "Loss 0.2500.") || !strings.Contains(string(md), "the final loss") {
		t.Errorf("report.md (%v):\n%s", err, md)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("summary.json: %v", err)
	}
	dir = t.TempDir()
	r, _ = New(dir, "T")
	bad := template.Must(template.New("x").Funcs(template.FuncMap{"num": Format}).Parse("{{num .Missing}}"))
	if err := r.Finish(bad, struct{}{}, fsys); err == nil {
		t.Error("a failing template: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err == nil {
		t.Error("a failing template wrote report.md")
	}
}
