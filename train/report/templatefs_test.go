package report

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestTemplateFS(t *testing.T) {
	files := fstest.MapFS{
		"report.md.tmpl": {Data: []byte("x = {{num .X}}\n")},
		"keys.txt":       {Data: []byte("# comment\nx the value of x\n")},
	}
	tmpl, err := ParseTemplateFS(files)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, map[string]float64{"X": 0.45587}); err != nil || b.String() != "x = 0.4559\n" {
		t.Errorf("executed %q, %v", b.String(), err)
	}
	r, err := New(t.TempDir(), "T")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DescribeKeysFS(files); err != nil || len(r.docs) != 1 || r.docs[0] != (keyDoc{"x", "the value of x"}) {
		t.Errorf("DescribeKeysFS: %v, docs %v", err, r.docs)
	}
	if _, err := ParseTemplateFS(fstest.MapFS{}); err == nil {
		t.Error("no report.md.tmpl: no error")
	}
	if err := r.DescribeKeysFS(fstest.MapFS{}); err == nil {
		t.Error("no keys.txt: no error")
	}
}
