// Package report writes the output folder of an experiment program: tables
// as CSV, every reported number in summary.json under documented keys, PNG
// plots, the document claims that were checked with their verdicts, and a
// report.md that starts with the exact command that produced the folder.
// GELU's minimum, found on a grid and reported (Example):
//
//	gelu := func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }
//	f := report.FuncSeries("GELU", gelu, -3, 3, 20001)
//	i := slices.Index(f.Y, slices.Min(f.Y)) // the grid point where f is smallest
//
//	dir, _ := os.MkdirTemp("", "report-example")
//	defer os.RemoveAll(dir)
//	r, err := report.New(dir, "Activation properties", report.WithCommand("./props")) // default: os.Args
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	r.Text("Measured on a grid of 20 001 points.")
//	r.Table("properties", []string{"activation", "min x", "min f"}, [][]any{{"GELU", f.X[i], f.Y[i]}})   // properties.csv + markdown
//	r.Plot("f", report.PlotSpec{Title: "f(x)", XLabel: "x", YLabel: "f(x)", Series: []report.Series{f}}) // f.png + link
//	r.Describe("*.min_x", "where f attains its minimum")
//	r.Set("gelu.min_x", f.X[i])
//	r.Claim(report.Claim{Source: "doc 004", Claim: "minimum at x ≈ −0.75", Measured: report.Format(f.X[i]), Verdict: report.Near(f.X[i], -0.75, 0.005)})
//	if err := r.Close(); err != nil { // writes summary.json, claims.csv and report.md
//		fmt.Println(err)
//		return
//	}
//	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
//	fmt.Print(string(md))
//
// Later sections read measurements back by key with r.Get (a key never set
// is an error that Close reports, so a typo cannot pass a check), and
// verdicts are computed with report.Near or report.VerdictOf. Plots put
// their legend where no line is (PlotSpec.Legend), take axis limits
// (XLim, YLim), and label ticks at round numbers, exactly.
//
// Everything is deterministic: the same calls give byte-identical files (no
// timestamps, sorted keys, fixed number formats, PNGs rendered in pure Go;
// the PNG bytes may differ between CPU architectures where the compiler
// fuses multiply-adds differently, but not between runs on one machine).
// Every file is written atomically (WriteFileAtomic, CreateAtomic): a
// reader sees the old file or the complete new one, never a partial one.
//
// Prose can live in a text/template instead (ParseTemplate, Execute): the
// template reads like the report.md it makes and places tables and plots
// with {{table "name" .T}} and {{plot "name" .Spec}}; the program only
// computes the data it is executed with. Capture turns blocks another
// package adds (experiment.WriteCurves) into markdown for a template, and
// DescribeKeys reads the summary keys' descriptions from a text file.
// ParseBlocks and ExecuteBlocks run such a template whose functions add
// their own blocks, leaving the text between them byte for byte (model
// samples in code blocks).
//
// The same pieces work without a Report: WriteFileAtomic for checkpoints,
// CreateCSV for per-step training metrics, WritePlot for a single figure,
// Quantiles for a band across seeds. ReadSummary reads a summary.json back
// (Number, Undocumented), to compare runs or to test the program that
// wrote it.
package report
