package report

import (
	"io/fs"
	"text/template"
)

// Finish ends a report whose template and key descriptions are embedded
// files (ParseTemplateFS, DescribeKeysFS): it executes t with data
// (Execute), describes the summary keys with fsys's keys.txt and closes
// the report (Close), which writes its files. When Execute fails it
// returns that error and writes nothing.
//
//	//go:embed report.md.tmpl keys.txt
//	var files embed.FS
//	…
//	return r.Finish(reportTmpl, pg, files)
func (r *Report) Finish(t *template.Template, data any, fsys fs.FS) error {
	if err := r.Execute(t, data); err != nil {
		return err
	}
	r.DescribeKeysFS(fsys)
	return r.Close()
}
