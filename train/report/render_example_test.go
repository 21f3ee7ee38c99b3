package report_test

import (
	"fmt"
	"text/template"

	"github.com/geluproject/gelu/train/report"
)

// A table of settings whose cells are prose lives in the report's template
// as a named template; the program renders it with its data.
func ExampleRenderTable() {
	t := template.Must(report.ParseTemplate("report.md.tmpl", `{{define "setup"}}
| setting | this run |
| batch | {{.Batch}} examples{{if gt .Batch 100}}, as in the paper{{end}} |
| seeds | {{.Seeds}}, paired |
{{end}}`))
	d, err := report.RenderTable(t, "setup", struct{ Batch, Seeds int }{128, 5})
	fmt.Println(d.Header, err)
	for _, row := range d.Rows {
		fmt.Printf("%q\n", row)
	}
	// Output:
	// [setting this run] <nil>
	// ["batch" "128 examples, as in the paper"]
	// ["seeds" "5, paired"]
}
