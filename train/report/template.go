package report

// Report prose as a text/template: the template reads like the report.md it
// makes, and the program only computes the numbers, tables and plots it
// places.

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// TableData is a table for the template function table: a header and one
// row per line, as Report.Table takes them.
type TableData struct {
	Header []string
	Rows   [][]any
}

// Funcs are the functions every report template can call (ParseTemplate
// adds them):
//
//	{{num .X}}            Format: 4 significant digits (-0.7518)
//	{{digits 6 .X}}       FormatDigits with 6 digits
//	{{pm .V .Err}}        FormatPM: 0.45587 ± 0.00036
//	{{join ", " .Names}}  strings.Join
//	{{table "name" .T}}   a TableData as name.csv and a markdown table (Report.Table)
//	{{plot "name" .Spec}} a PlotSpec as name.png with its caption (Report.Plot)
//	{{plot "name" (caption "Log scale." .Spec)}}  the same with this caption
//	{{render "cap" .}}    the template {{define "cap"}}…{{end}} as a string, trimmed
//	                      (a long caption: (caption (render "cap" .) .Spec))
//
// table and plot write their files when Report.Execute runs the template;
// outside it they fail.
var Funcs = template.FuncMap{
	"num":    Format,
	"digits": func(n int, v float64) string { return FormatDigits(v, n) },
	"pm":     FormatPM,
	"join":   func(sep string, s []string) string { return strings.Join(s, sep) },
	"caption": func(text string, spec PlotSpec) PlotSpec {
		spec.Caption = text
		return spec
	},
	"table":  func(string, TableData) (string, error) { return "", errNoReport },
	"plot":   func(string, PlotSpec) (string, error) { return "", errNoReport },
	"render": func(string, any) (string, error) { return "", errNoReport },
}

var errNoReport = errors.New("report: table, plot and render work only in a template run by Report.Execute")

// ParseTemplate parses a report template named name with Funcs. Examples
// keep theirs in a report.md.tmpl file beside the code:
//
//	//go:embed report.md.tmpl
//	var reportText string
//	var reportTmpl = template.Must(report.ParseTemplate("report.md.tmpl", reportText))
func ParseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Funcs(Funcs).Option("missingkey=error").Parse(text)
}

// Execute runs the template t (see ParseTemplate; a named one with
// ExecuteTemplate's meaning when name is not "") with data and adds its
// output to report.md, where Text would. Lines holding only spaces are
// emptied and runs of blank lines become one, so that template actions on
// lines of their own leave no trace: paragraphs are separated by exactly
// one blank line, as between the blocks of Text, Table and Plot.
func (r *Report) Execute(t *template.Template, data any) error {
	t, err := t.Clone() // the report's own table and plot, without touching t
	if err != nil {
		return r.fail(fmt.Errorf("report: template: %w", err))
	}
	t.Funcs(template.FuncMap{
		"table": func(name string, d TableData) (string, error) { return r.table(name, d.Header, d.Rows) },
		"plot":  func(name string, spec PlotSpec) (string, error) { return r.plot(name, spec) },
		"render": func(name string, data any) (string, error) {
			var b strings.Builder
			err := t.ExecuteTemplate(&b, name, data)
			return strings.TrimSpace(b.String()), err
		},
	})
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return r.fail(fmt.Errorf("report: template %s: %w", t.Name(), err))
	}
	if md := tidy(b.String()); md != "" {
		r.Text(md)
	}
	return nil
}

var (
	blankLine  = regexp.MustCompile(`(?m)^[ \t]+$`)
	blankLines = regexp.MustCompile(`\n{3,}`)
)

// tidy empties lines of spaces, turns runs of blank lines into one and
// trims the ends.
func tidy(s string) string {
	return strings.TrimSpace(blankLines.ReplaceAllString(blankLine.ReplaceAllString(s, ""), "\n\n"))
}

// Capture runs add, which adds blocks to the report (experiment.WriteCurves,
// say), and returns those blocks as markdown instead, for a template to
// place. An error of add is returned as it is (and kept, like every error
// of the report's methods).
func (r *Report) Capture(add func() error) (string, error) {
	n := len(r.blocks)
	err := add()
	md := strings.Join(r.blocks[n:], "\n\n")
	r.blocks = r.blocks[:n]
	return md, err
}

// DescribeKeys documents summary keys listed in text, one a line: the key
// pattern, a space, its description ("*.min_x where f attains its
// minimum"). Blank lines and lines starting with # are skipped. Examples
// keep the list in an embedded keys.txt, beside report.md.tmpl. It returns
// the first error (a line without a description, a bad pattern).
func (r *Report) DescribeKeys(text string) error {
	var first error
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var err error
		if pattern, desc, ok := strings.Cut(line, " "); ok {
			err = r.Describe(pattern, desc)
		} else {
			err = r.fail(fmt.Errorf("report: DescribeKeys: line %d %q, want a key pattern, a space and its description", i+1, line))
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}
