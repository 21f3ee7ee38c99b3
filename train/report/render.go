package report

// Prose that ends up outside report.md's running text (a claim's words,
// the cells of a table of settings) kept in the report's template all the
// same, as named templates ({{define "name"}}…{{end}}) of the same file:
// the program computes the numbers and renders these by name.

import (
	"fmt"
	"strings"
	"text/template"
)

// Render executes the template named name of t with data and returns its
// output with the ends trimmed. The functions table, plot and render do
// not work in it (they need Report.Execute): it is for words and numbers.
func Render(t *template.Template, name string, data any) (string, error) {
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("report: template %q: %w", name, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// RenderTable renders the template named name of t with data (Render) and
// reads the output as a table (ParseTable), for a table of words, such as
// a run's settings, whose cells are prose:
//
//	{{define "setup"}}
//	| setting | value |
//	| batch | {{.Batch}} examples |
//	{{end}}
func RenderTable(t *template.Template, name string, data any) (TableData, error) {
	s, err := Render(t, name, data)
	if err != nil {
		return TableData{}, err
	}
	d, err := ParseTable(s)
	if err != nil {
		return TableData{}, fmt.Errorf("report: template %q: %w", name, err)
	}
	return d, nil
}

// ParseTable reads a table written as markdown: a header line
// "| a | b |", optionally a separator line "| --- | --- |", and a line per
// row with as many cells as the header. Cells are strings, trimmed; `\|`
// stands for a "|" inside a cell. Blank lines are skipped.
func ParseTable(md string) (TableData, error) {
	var d TableData
	for i, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
			return TableData{}, fmt.Errorf("table line %d %q: want cells between '|'", i+1, line)
		}
		cells := strings.Split(strings.ReplaceAll(line[1:len(line)-1], `\|`, "\x00"), "|")
		for k := range cells {
			cells[k] = strings.ReplaceAll(strings.TrimSpace(cells[k]), "\x00", "|")
		}
		switch {
		case d.Header == nil:
			d.Header = cells
		case len(d.Rows) == 0 && strings.Trim(strings.Join(cells, ""), "-: ") == "":
			// the separator under the header
		case len(cells) != len(d.Header):
			return TableData{}, fmt.Errorf("table line %d has %d cells, the header %d", i+1, len(cells), len(d.Header))
		default:
			row := make([]any, len(cells))
			for k, c := range cells {
				row[k] = c
			}
			d.Rows = append(d.Rows, row)
		}
	}
	if d.Header == nil {
		return TableData{}, fmt.Errorf("empty table")
	}
	return d, nil
}

// ClaimBlock records a claim (Claim) whose words come from the template
// named name of t, rendered with data: three lines starting "source:",
// "claim:" and "measured:", each followed by that field's text.
//
//	{{define "claim.faster"}}
//	source: doc 001 (blog)
//	claim: models with GELU converge faster
//	measured: mean training loss GELU {{num .GELU}}, ReLU {{num .ReLU}}
//	{{end}}
func (r *Report) ClaimBlock(t *template.Template, name string, data any, v Verdict) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	s, err := Render(t, name, data)
	if err != nil {
		return r.fail(err)
	}
	var c Claim
	fields := map[string]*string{"source": &c.Source, "claim": &c.Claim, "measured": &c.Measured}
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, text, _ := strings.Cut(strings.TrimSpace(line), ":")
		f, ok := fields[key]
		if !ok || *f != "" {
			return r.fail(fmt.Errorf("report: claim template %q: line %q, want one line each starting source:, claim: and measured:", name, line))
		}
		*f = strings.TrimSpace(text)
	}
	c.Verdict = v
	return r.Claim(c)
}

// NewFromTemplate starts a report in dir (New) titled by the template
// named "title" of t, rendered with data (Render): the title is prose too.
func NewFromTemplate(dir string, t *template.Template, data any, opts ...Option) (*Report, error) {
	title, err := Render(t, "title", data)
	if err != nil {
		return nil, err
	}
	return New(dir, title, opts...)
}
