package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ExecuteBlocks keeps the text between its block calls byte for byte
// (blank lines and lines of spaces inside a code block stay), puts the
// blocks the functions add in their place, and documents keys with
// describe.
func TestExecuteBlocks(t *testing.T) {
	const text = "Intro {{.N}}.\n\n{{tbl}}\n\n```\na\n\n\n  \nb\n```\n{{describe \"n\" \"the number\"}}" +
		`{{define "title"}}T{{.N}}{{end}}{{define "claim"}}source: src{{"\n"}}claim: c{{.N}}{{"\n"}}measured: m {{num .X}}{{end}}`
	tmpl, err := ParseBlocks("t.tmpl", text, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data := map[string]any{"N": 3, "X": 0.123456}
	r, err := NewFromTemplate(dir, tmpl, data)
	if err != nil {
		t.Fatal(err)
	}
	r.Set("n", 3)
	if err := r.ClaimBlock(tmpl, "claim", data, Unclear); err != nil {
		t.Fatal(err)
	}
	err = r.ExecuteBlocks(tmpl, data, map[string]func(...string) error{"tbl": func(...string) error {
		return r.Table("tab", []string{"a"}, [][]any{{1}})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"# T3\n", "| src | c3 | m 0.1235 | unclear |", "Intro 3.\n\n| a |\n| --- |\n| 1 |\n\nData: [tab.csv](tab.csv)\n\n```\na\n\n\n  \nb\n```\n\n", "| `n` | the number |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}
