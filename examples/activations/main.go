// Activations measures every activation in activation.All() (ReLU, GELU and its
// tanh and sigmoid approximations, Softplus, SiLU, ELU and x·σ(βx) with
// β = √(8/π)) and checks the source documents' claims against the
// measurements. It writes to -out:
//
//	report.md        the command, the claims with verdicts, every table, the plots
//	summary.json     every reported number under a documented key, and the tables
//	*.csv            the tables at full precision
//	*.png            f, f', f'' of every activation; the approximation error of GELU's forms
//
// Run it from the module root:
//
//	go run ./examples/activations                      # about 5 s
//	go run ./examples/activations -mc 10000000 -seed 2 # tighter Monte Carlo, other samples
//
// Sections, in the order of report.md (its prose is report.md.tmpl, the
// measurements behind it sections.go, the document claims claims.go):
//
//  1. Shape (analysis.ProfileOf): minimum, f'(0), f”(0), inflection
//     points, where f” > 0, E[f(X)].
//  2. Tails: f(−10), f(−5), 5 − f(5), 10 − f(10) and the decay rate f'/f at −10.
//  3. Plots of f, f', f”.
//  4. GELU's tanh and sigmoid forms: the largest error, and the documents'
//     statistic (largest error over 1000 N(0,1) samples), repeated -trials times.
//  5. E[f'(X)], E[f'(X)²], Var[f'(X)] for X ~ N(0,1): adaptive quadrature with
//     an error estimate and Monte Carlo with a standard error, and the z-score
//     of their difference; they must agree.
//  6. E[ReLU(x+ε)], ε ~ N(0, σ²), by Monte Carlo against xΦ(x/σ) + σφ(x/σ).
//  7. The documents' claims, each with the measurement and a computed verdict.
package main

import (
	_ "embed"
	"flag"
	"os"
	"text/template"

	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

// config is everything a run depends on; the same config gives
// byte-identical output. The tagged fields are the flags
// (experiment.BindFlags), checked by experiment.CheckFlags.
type config struct {
	Out    string   `flag:"out" help:"output folder; created if needed, the files this program writes are replaced"`
	Seed   uint64   `flag:"seed" help:"seed of every random stream (Monte Carlo samples, the 1000-sample statistic)"`
	MC     int      `flag:"mc" help:"Monte Carlo samples per expectation; standard errors shrink as 1/√mc" check:"min=4"`
	Trials int      `flag:"trials" help:"how often the documents' max over 1000 N(0,1) samples is redrawn, to show its spread" check:"min=1"`
	DPI    int      `flag:"dpi" help:"resolution of the PNG plots in dots per inch" check:"min=0"`
	Args   []string // the command line shown in report.md
}

func main() {
	c := config{Out: "out/activations", Seed: 1, MC: 1000000, Trials: 1000, DPI: 144}
	err := experiment.BindFlags(flag.CommandLine, &c)
	if err == nil {
		flag.Parse()
		c.Args = os.Args
		_, err = run(c)
	}
	experiment.Exit("activations", c.Out, err)
}

// quantity is one number measured two ways.
type quantity struct {
	Act, What string
	Quad, MC  analysis.Estimate // for the ReLU-noise rows Quad is the closed form (Err 0)
}

// page is what report.md.tmpl shows besides the claims.
type page struct {
	config
	Properties, Tails          report.TableData  // 1, 2
	TanhLogslope, GELULogslope float64           // f'/f at −10
	Curves                     []report.PlotSpec // 3: f, f', f''
	Approximations             report.TableData  // 4
	ApproxError                report.PlotSpec
	Expectations               report.TableData // 5
	MaxZ, PValue               float64          // the largest |z| of 5, and its p-value
	Worst                      string           // where it is
	NZ                         int              // how many z
	ReluNoise                  report.TableData // 6
}

//go:embed report.md.tmpl
var reportText string

//go:embed keys.txt
var keysText string

var reportTmpl = template.Must(report.ParseTemplate("report.md.tmpl", reportText))

// results is what the tests check besides the files.
type results struct {
	Quantities []quantity // section 5
	Noise      []quantity // section 6
}

func run(c config) (*results, error) {
	if err := experiment.CheckFlags(c); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Activation properties", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	res, pg := &results{}, &page{config: c}
	curves(c, pg) // 3
	for _, step := range []func() error{
		func() error { return shape(r, pg) },                 // 1, 2
		func() error { return approximations(r, c, pg) },     // 4
		func() error { return gradientStats(r, c, res, pg) }, // 5
		func() error { return reluNoise(r, c, res, pg) },     // 6
		func() error { return claims(r, c.Trials) },          // 7
		func() error { return r.Execute(reportTmpl, pg) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	r.DescribeKeys(keysText)
	return res, r.Close()
}
