package report_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/geluproject/gelu/train/report"
)

// An experiment's output folder in a few lines: GELU's minimum found on a
// grid, as a table, a plot, a summary key and a checked claim. The body
// is the package documentation's sketch.
func Example() {
	gelu := func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }
	f := report.FuncSeries("GELU", gelu, -3, 3, 20001)
	i := slices.Index(f.Y, slices.Min(f.Y)) // the grid point where f is smallest

	dir, _ := os.MkdirTemp("", "report-example")
	defer os.RemoveAll(dir)
	r, err := report.New(dir, "Activation properties", report.WithCommand("./props")) // default: os.Args
	if err != nil {
		fmt.Println(err)
		return
	}
	r.Text("Measured on a grid of 20 001 points.")
	r.Table("properties", []string{"activation", "min x", "min f"}, [][]any{{"GELU", f.X[i], f.Y[i]}})   // properties.csv + markdown
	r.Plot("f", report.PlotSpec{Title: "f(x)", XLabel: "x", YLabel: "f(x)", Series: []report.Series{f}}) // f.png + link
	r.Describe("*.min_x", "where f attains its minimum")
	r.Set("gelu.min_x", f.X[i])
	r.Claim(report.Claim{Source: "doc 004", Claim: "minimum at x ≈ −0.75", Measured: report.Format(f.X[i]), Verdict: report.Near(f.X[i], -0.75, 0.005)})
	if err := r.Close(); err != nil { // writes summary.json, claims.csv and report.md
		fmt.Println(err)
		return
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	fmt.Print(string(md))
	// Output:
	// ```sh
	// ./props
	// ```
	//
	// # Activation properties
	//
	// ## Claims from the source documents, checked
	//
	// | source | claim | measured | verdict |
	// | --- | --- | --- | --- |
	// | doc 004 | minimum at x ≈ −0.75 | -0.7519 | **confirmed** |
	//
	// Also in [claims.csv](claims.csv).
	//
	// Measured on a grid of 20 001 points.
	//
	// | activation | min x | min f |
	// | --- | --- | --- |
	// | GELU | -0.7519 | -0.1700 |
	//
	// Data: [properties.csv](properties.csv)
	//
	// ![f(x)](f.png)
	//
	// ## Summary values
	//
	// [summary.json](summary.json) holds the values of these keys at full precision under `values`, every table under `tables` and the claims under `claims`.
	//
	// | key | meaning |
	// | --- | --- |
	// | `*.min_x` | where f attains its minimum |
}

func ExampleFormatPM() {
	fmt.Println(report.FormatPM(0.4558732, 0.00035731))
	fmt.Println(report.Format(-0.7517915), report.Format(0.000471))
	// Output:
	// 0.45587 ± 0.00036
	// -0.7518 4.710e-04
}
