package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/geluproject/gelu/train/report"
)

// An experiment's output folder in a few lines.
func Example() {
	dir, _ := os.MkdirTemp("", "report-example")
	defer os.RemoveAll(dir)

	r, err := report.New(dir, "Squares", report.WithCommand("./squares", "-n", "3"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var rows [][]any
	var xs, ys []float64
	for i := 1; i <= 3; i++ {
		x := float64(i) / 3
		rows = append(rows, []any{i, x, x * x})
		xs, ys = append(xs, x), append(ys, x*x)
	}
	r.Text("Squares of thirds.")
	r.Table("squares", []string{"i", "x", "x²"}, rows)
	r.Plot("squares", report.PlotSpec{Title: "x²", XLabel: "x", YLabel: "x²",
		Series: []report.Series{{Name: "x²", X: xs, Y: ys}}})
	r.Describe("sum", "sum of the squares")
	r.Set("sum", ys[0]+ys[1]+ys[2])
	if err := r.Close(); err != nil {
		fmt.Println(err)
		return
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	fmt.Println(strings.Join(strings.Split(string(md), "\n")[:14], "\n"))
	// Output:
	// ```sh
	// ./squares -n 3
	// ```
	//
	// # Squares
	//
	// Squares of thirds.
	//
	// | i | x | x² |
	// | --- | --- | --- |
	// | 1 | 0.3333 | 0.1111 |
	// | 2 | 0.6667 | 0.4444 |
	// | 3 | 1.000 | 1.000 |
	//
}

func ExampleFormatPM() {
	fmt.Println(report.FormatPM(0.4558732, 0.00035731))
	fmt.Println(report.Format(-0.7517915), report.Format(0.000471))
	// Output:
	// 0.45587 ± 0.00036
	// -0.7518 4.710e-04
}
