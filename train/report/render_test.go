package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"
)

func TestParseTable(t *testing.T) {
	d, err := ParseTable("\n| setting | value |\n| --- | --- |\n| batch | 64 examples |\n| pipe | a \\| b |\n")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Header, []string{"setting", "value"}) || len(d.Rows) != 2 || d.Rows[0][1] != "64 examples" || d.Rows[1][1] != "a | b" {
		t.Errorf("parsed %q %q, want header [setting value] and rows [batch, 64 examples], [pipe, a | b]", d.Header, d.Rows)
	}
	for _, bad := range []string{"", "no pipes", "| a | b |\n| 1 |"} {
		if _, err := ParseTable(bad); err == nil {
			t.Errorf("ParseTable(%q) accepted a malformed table", bad)
		}
	}
}

func TestClaimBlockFromTemplate(t *testing.T) {
	tm := template.Must(ParseTemplate("t", `{{define "title"}}T {{.}}{{end}}{{define "c"}}
source: doc {{.}}
claim: x is {{.}}
measured: x = {{num 0.5}}
{{end}}{{define "bad"}}claim: only this{{end}}`))
	dir := t.TempDir()
	r, err := NewFromTemplate(dir, tm, 7, WithCommand("prog"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ClaimBlock(tm, "c", 7, Confirmed); err != nil {
		t.Fatal(err)
	}
	if err := r.ClaimBlock(tm, "bad", 7, Confirmed); err == nil {
		t.Error("a claim template without source and measurement was accepted")
	}
	r.Close()
	csv, _ := os.ReadFile(filepath.Join(dir, "claims.csv"))
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if want := "source,claim,measured,verdict\ndoc 7,x is 7,x = 0.5000,confirmed\n"; string(csv) != want {
		t.Errorf("claims.csv is %q, want %q", csv, want)
	}
	if !strings.Contains(string(md), "\n# T 7\n") {
		t.Errorf("report.md has no heading \"# T 7\":\n%.80s", md)
	}
}

func TestWideRange(t *testing.T) {
	s := []Series{{Y: []float64{1, 2}}, {Y: []float64{0, -5}, Lo: []float64{0.5}, Hi: []float64{14}}}
	if WideRange(s, 30) || !WideRange(s, 20) { // positive values span 0.5 to 14: a factor of 28
		t.Errorf("WideRange over 0.5…14: %v at 30, %v at 20; want false, true", WideRange(s, 30), WideRange(s, 20))
	}
	if WideRange(nil, 30) {
		t.Error("no values span a wide range")
	}
}
