package report

// Report prose as a template whose functions add their own blocks (a
// table, a plot, model samples in code blocks), the text between them
// kept as it is.

import (
	"fmt"
	"strings"
	"text/template"
)

// ParseBlocks parses a report template named name, as ParseTemplate does,
// that also calls the functions named in blocks and describe;
// ExecuteBlocks binds them.
func ParseBlocks(name, text string, blocks ...string) (*template.Template, error) {
	fm := template.FuncMap{}
	for _, b := range append(blocks, "describe") {
		fm[b] = func(...string) (string, error) { return "", errNoReport }
	}
	return template.New(name).Funcs(Funcs).Funcs(fm).Option("missingkey=error").Parse(text)
}

// ExecuteBlocks runs t (ParseBlocks) with data and adds its output to
// report.md a block at a time: before each call of one of blocks, which
// adds its own blocks to the report (Table, Plot, …), the text so far is
// added with Text. {{describe "key" "text"}} is Describe. Unlike Execute, it leaves the lines of the
// text alone (only the ends of each block are trimmed), so that
// preformatted text, such as a language model's samples in code blocks,
// stays as it is byte for byte.
func (r *Report) ExecuteBlocks(t *template.Template, data any, blocks map[string]func(args ...string) error) error {
	t, err := t.Clone()
	if err != nil {
		return r.fail(fmt.Errorf("report: template: %w", err))
	}
	var text strings.Builder
	flush := func() {
		if s := strings.TrimSpace(text.String()); s != "" {
			r.Text(s)
		}
		text.Reset()
	}
	fm := template.FuncMap{"describe": func(kt ...string) (string, error) {
		if len(kt) != 2 {
			return "", fmt.Errorf("report: describe takes a key and a text, got %q", kt)
		}
		flush()
		return "", r.Describe(kt[0], kt[1])
	}}
	for name, add := range blocks {
		fm[name] = func(args ...string) (string, error) {
			flush()
			return "", add(args...)
		}
	}
	if err := t.Funcs(fm).Execute(&text, data); err != nil {
		return r.fail(fmt.Errorf("report: template %s: %w", t.Name(), err))
	}
	flush()
	return nil
}
