package report

// A program's report files embedded together: report.md.tmpl and keys.txt
// side by side in one embed.FS, read in one line each.

import (
	"fmt"
	"io/fs"
	"text/template"
)

// ParseTemplateFS parses the file report.md.tmpl of fsys with Funcs, as
// ParseTemplate does. Programs embed it beside keys.txt:
//
//	//go:embed report.md.tmpl keys.txt
//	var files embed.FS
//	var reportTmpl = template.Must(report.ParseTemplateFS(files))
//	…
//	r.DescribeKeysFS(files)
func ParseTemplateFS(fsys fs.FS) (*template.Template, error) {
	b, err := fs.ReadFile(fsys, "report.md.tmpl")
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return ParseTemplate("report.md.tmpl", string(b))
}

// DescribeKeysFS is DescribeKeys with the text of the file keys.txt of
// fsys.
func (r *Report) DescribeKeysFS(fsys fs.FS) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	b, err := fs.ReadFile(fsys, "keys.txt")
	if err != nil {
		return r.fail(fmt.Errorf("report: %w", err))
	}
	return r.DescribeKeys(string(b))
}
