package bench

// The workload table: every workload is "<family>/<args>/<dtype>", one name
// on both sides (the peer parses it the same way); a family says how to
// build its step here, its unit and whether it runs matrix products.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// Family is one kind of workload: a row of a benchmark's table.
type Family struct {
	Name string
	// Unit is "ms" (per step) when Work is nil, else a throughput: work
	// per second.
	Unit  string
	About string // one line for the report
	// Work, for a throughput unit, is what one step processes, in the
	// unit's numerator (Melem of GELU, tokens of a GPT batch).
	Work func(args string) (float64, error)
	// BLAS: the workload runs matrix products, so the BLAS thread count
	// and the own GEMM are worth trying.
	BLAS bool
	// Paired: the step is a lone matrix product, which runs on the BLAS's
	// threads alone, so GOMAXPROCS and OpenBLAS's thread count take one
	// value together instead of every pair (BLAS.Settings).
	Paired bool
	// NoPeer: the peer does not run it, and it has a table of its own
	// instead of a row in the Overview (the matmul and peak families).
	NoPeer bool
	// Fastest: the step is a rate bound (the peak), so a child reports the
	// fastest of at least FastestReps timed runs instead of the median: on
	// a shared machine the least-disturbed run is the one nearest the
	// bound.
	Fastest bool
	// Build returns the function timed (one run) and the training steps a
	// run makes (1 except for a pass over a data set).
	Build func(args string, dt tensor.Dtype) (run func() error, steps int, err error)
	// BuildBF16, where the family has one, is Build's bfloat16 variant
	// (dtype "bfloat16"): a float32 graph whose matrix products run under
	// graph.SetAutocast(BFloat16), PyTorch's CPU autocast on the peer.
	BuildBF16 func(args string) (run func() error, steps int, err error)
}

// Families is a benchmark's workload table.
type Families []Family

// Workload is a parsed workload name.
type Workload struct {
	Name   string
	Family *Family
	Args   string
	Dtype  tensor.Dtype // float32 for bfloat16 workloads
	// Autocast is graph.BFloat16 for the dtype "bfloat16" (BuildBF16).
	Autocast graph.Precision
	Work     float64 // per step, for a throughput unit; 0 for ms
}

// DtypeName is the dtype part of w's name: float32, float64 or bfloat16.
func (w Workload) DtypeName() string {
	if w.Autocast == graph.BFloat16 {
		return "bfloat16"
	}
	return w.Dtype.String()
}

var dtypes = map[string]tensor.Dtype{"float32": tensor.Float32, "float64": tensor.Float64, "bfloat16": tensor.Float32}

// Parse reads a workload name <family>/<args>/<float32|float64|bfloat16> of fs.
func (fs Families) Parse(name string) (Workload, error) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return Workload{}, fmt.Errorf("workload %q: want <family>/<args>/<float32|float64|bfloat16>", name)
	}
	dt, ok := dtypes[parts[2]]
	if !ok {
		return Workload{}, fmt.Errorf("workload %q: dtype %q, want float32, float64 or bfloat16", name, parts[2])
	}
	for i := range fs {
		if f := &fs[i]; f.Name == parts[0] {
			w := Workload{Name: name, Family: f, Args: parts[1], Dtype: dt}
			if parts[2] == "bfloat16" {
				if f.BuildBF16 == nil {
					return Workload{}, fmt.Errorf("workload %q: %s has no bfloat16 variant", name, f.Name)
				}
				w.Autocast = graph.BFloat16
			}
			if f.Work != nil {
				var err error
				if w.Work, err = f.Work(w.Args); err != nil {
					return Workload{}, fmt.Errorf("workload %q: %w", name, err)
				}
			}
			return w, nil
		}
	}
	return Workload{}, fmt.Errorf("workload %q: unknown family %q", name, parts[0])
}

// ParseAll parses every name.
func (fs Families) ParseAll(names []string) ([]Workload, error) {
	var ws []Workload
	for _, name := range names {
		w, err := fs.Parse(name)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// Names lists the families' names, comma-separated.
func (fs Families) Names() string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Name)
	}
	return strings.Join(s, ", ")
}

// Select keeps those of names that -workloads (only) selects: an item
// with a "/" is a workload name, taken as given; any other item is a
// family, selecting its workloads in names. nil selects all names.
func (fs Families) Select(names, only []string) ([]string, error) {
	if only == nil {
		return names, nil
	}
	var sel []string
	for _, item := range only {
		item = strings.TrimSpace(item)
		if strings.Contains(item, "/") {
			if !slices.Contains(sel, item) {
				sel = append(sel, item)
			}
			continue
		}
		if !slices.ContainsFunc(fs, func(f Family) bool { return f.Name == item }) {
			return nil, fmt.Errorf("-workloads: %q is neither a family (want one of %s) nor a workload name <family>/<args>/<dtype>", item, fs.Names())
		}
		for _, n := range names {
			if strings.HasPrefix(n, item+"/") && !slices.Contains(sel, n) {
				sel = append(sel, n)
			}
		}
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("-workloads %s: no workload of this run selected", strings.Join(only, ","))
	}
	return sel, nil
}

// Throughput reports whether w's unit is work per second (higher is
// better) rather than ms per step.
func (w Workload) Throughput() bool { return w.Family.Work != nil }

// Value converts seconds per step to the workload's unit.
func (w Workload) Value(s float64) float64 {
	if w.Throughput() {
		return w.Work / s
	}
	return s * 1e3
}

// Key is w's name as a summary key prefix: the slashes become dots.
func (w Workload) Key() string { return strings.ReplaceAll(w.Name, "/", ".") }

// FamiliesOf lists the families of ws, each once, in the order of ws.
func FamiliesOf(ws []Workload) []*Family {
	var fs []*Family
	for _, w := range ws {
		if !slices.Contains(fs, w.Family) {
			fs = append(fs, w.Family)
		}
	}
	return fs
}
