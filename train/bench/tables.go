package bench

// The report's tables from a Tally, with the summary keys they stand for;
// the prose around them is the program's template.

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/geluproject/gelu/train/report"
)

// Optional is v, or "—" (a cell that does not apply) when !ok.
func Optional(ok bool, v any) any {
	if !ok {
		return "—"
	}
	return v
}

// Overview is the table of every workload but those of NoPeer families,
// each side at its best setting (named beside it), the speedup over the
// peer (its time ÷ ours), and the peak RSS and allocations of this
// project's child at its best setting. This project's column is the
// machine's default BLAS (Ours); a column for the other BLAS follows when
// t has that side (Other). peerName heads the peer's column. It sets the
// summary keys <workload key>.ours, .ours_setting, .ours_blas_name (for
// workloads with matrix products), .peak_rss_mb, .allocs_per_step,
// .alloc_bytes_per_step, .other_blas, .other_blas_setting,
// .other_blas_name, .pytorch, .pytorch_setting and .speedup_vs_pytorch,
// and where the peer ran as installed (AsInstalled) .pytorch_as_installed,
// its setting and .speedup_vs_pytorch_as_installed.
func (t Tally) Overview(r *report.Report, ws []Workload, peerName string) report.TableData {
	other := len(t[Other]) > 0
	header := []string{"workload", "unit", t.Column(Ours), "our setting"}
	if other {
		header = append(header, t.Column(Other), "its setting")
	}
	header = append(header, peerName, "PyTorch setting", "speedup vs PyTorch", "peak RSS MB", "allocs/step")
	var rows [][]any
	for _, w := range ws {
		if w.Family.NoPeer {
			continue
		}
		key := w.Key()
		oset, o, _ := t.Best(Ours, w.Name)
		row := []any{w.Name, w.Family.Unit, w.Value(o.Seconds), oset}
		r.Set(key+".ours", w.Value(o.Seconds))
		r.Set(key+".ours_setting", oset)
		if w.Family.BLAS && o.BLAS != "" {
			r.Set(key+".ours_blas_name", ShortBLAS(o.BLAS))
		}
		r.Set(key+".peak_rss_mb", o.PeakMB)
		r.Set(key+".allocs_per_step", o.Allocs)
		r.Set(key+".alloc_bytes_per_step", o.AllocBytes)
		if other {
			fset, f, ok := t.Best(Other, w.Name)
			row = append(row, Optional(ok, w.Value(f.Seconds)), Optional(ok, fset))
			if ok {
				r.Set(key+".other_blas", w.Value(f.Seconds))
				r.Set(key+".other_blas_setting", fset)
				r.Set(key+".other_blas_name", ShortBLAS(f.BLAS))
			}
		}
		ts, tr, ok := t.Best(Peer, w.Name)
		row = append(row, Optional(ok, w.Value(tr.Seconds)), Optional(ok, ts), Optional(ok, tr.Seconds/o.Seconds), o.PeakMB, o.Allocs)
		if ok {
			r.Set(key+".pytorch", w.Value(tr.Seconds))
			r.Set(key+".pytorch_setting", ts)
			r.Set(key+".speedup_vs_pytorch", tr.Seconds/o.Seconds)
		}
		if s, ri, ok := t.asInstalled(w.Name); ok {
			r.Set(key+".pytorch_as_installed", w.Value(ri.Seconds))
			r.Set(key+".pytorch_as_installed_setting", s)
			r.Set(key+".speedup_vs_pytorch_as_installed", ri.Seconds/o.Seconds)
		}
		rows = append(rows, row)
	}
	return report.TableData{Header: header, Rows: rows}
}

// asInstalled is the peer's result on w as installed and its setting's
// name; ok is false when the peer never ran w so.
func (t Tally) asInstalled(w string) (setting string, r Result, ok bool) {
	for s, res := range t[Peer][w] {
		if strings.HasPrefix(s, AsInstalled) {
			return s, res, true
		}
	}
	return "", Result{}, false
}

// Column is the heading of side's columns: for this project's sides with
// the BLAS their children reported, "this project (own GEMM)" for the
// default, "this project with OpenBLAS 0.3.21 Haswell (GELU_BLAS=openblas)"
// for the other; the side's name when no child reported a BLAS.
func (t Tally) Column(side string) string {
	blas := ShortBLAS(t.BLAS(side))
	switch {
	case blas == "" || (side != Ours && side != Other):
		return side
	case side == Ours:
		return Ours + " (" + blas + ")"
	}
	env := "GELU_BLAS=" + strings.ToLower(strings.Fields(blas)[0])
	return Ours + " with " + blas + " (" + env + ")"
}

// Pair compares each workload of Family with its partner, a workload of
// another family (an ffn step with its matrix products alone, GELU with a
// copy moving the same bytes) or of another dtype (bfloat16 against
// float32).
type Pair struct {
	// Family is the workloads' family; "" takes those Only keeps, of any
	// family, and the rows then start with the family's name.
	Family  string
	Only    func(w Workload) bool
	Partner func(w Workload) string // the partner's workload name
	// Bytes, if set, is what the partner moves per step: the table's third
	// column is then the bandwidth our side's partner reached, in GB/s.
	Bytes  func(w Workload) float64
	Key    string   // summary key suffix of the ratio
	Header []string // the table's columns, as many as a row has
}

// Pairs has a row per workload of p.Family in ws: [its family,] its args and dtype, the
// partner's GB/s (with p.Bytes), then for this project and for the peer
// the two values (in the workload's unit) and the ratio of their times,
// also set as summary key <workload key>.<p.Key>[_pytorch].
func (t Tally) Pairs(r *report.Report, ws []Workload, p Pair) report.TableData {
	var rows [][]any
	for _, w := range ws {
		if (p.Family != "" && w.Family.Name != p.Family) || (p.Only != nil && !p.Only(w)) {
			continue
		}
		pair := p.Partner(w)
		row := []any{w.Args, w.DtypeName()}
		if p.Family == "" {
			row = append([]any{w.Family.Name}, row...)
		}
		if p.Bytes != nil {
			_, rb, ok := t.Best(Ours, pair)
			row = append(row, Optional(ok, p.Bytes(w)/rb.Seconds/1e9))
		}
		for i, side := range []string{Ours, Peer} {
			_, ra, okA := t.Best(side, w.Name)
			_, rb, okB := t.Best(side, pair)
			ok := okA && okB
			row = append(row, Optional(okA, w.Value(ra.Seconds)), Optional(okB, w.Value(rb.Seconds)), Optional(ok, ra.Seconds/rb.Seconds))
			if ok {
				r.Set(w.Key()+"."+p.Key+[]string{"", "_pytorch"}[i], ra.Seconds/rb.Seconds)
			}
		}
		rows = append(rows, row)
	}
	return report.TableData{Header: p.Header, Rows: rows}
}

// SettingsTable has a row per workload and a column per (side, setting)
// tried, headed "<Column(side)>: <setting>", each at its best round in the
// workload's unit; — where a setting does not apply.
func (t Tally) SettingsTable(ws []Workload) report.TableData {
	type col struct{ side, setting string }
	var cols []col
	seen := map[col]bool{}
	for _, side := range []string{Ours, Other, Peer} {
		for _, w := range ws {
			var names []string
			for s := range t[side][w.Name] {
				names = append(names, s)
			}
			// Setting names sort as the loops make them (GOMAXPROCS, then
			// BLAS threads), the peer as installed first.
			slices.SortFunc(names, func(a, b string) int {
				if ia, ib := strings.HasPrefix(a, AsInstalled), strings.HasPrefix(b, AsInstalled); ia != ib {
					return map[bool]int{true: -1, false: 1}[ia]
				}
				return strings.Compare(a, b)
			})
			for _, s := range names {
				if c := (col{side, s}); !seen[c] {
					seen[c] = true
					cols = append(cols, c)
				}
			}
		}
	}
	header := []string{"workload"}
	for _, c := range cols {
		header = append(header, t.Column(c.side)+": "+c.setting)
	}
	var rows [][]any
	for _, w := range ws {
		row := []any{w.Name}
		for _, c := range cols {
			res, ok := t[c.side][w.Name][c.setting]
			row = append(row, Optional(ok, w.Value(res.Seconds)))
		}
		rows = append(rows, row)
	}
	return report.TableData{Header: header, Rows: rows}
}

var blasThreads = regexp.MustCompile(`, \d+ threads?\)`)

// BLAS is the matrix-product backend side's children reported (this
// project's sides), without the thread count (which varies with the
// setting); "" when none reported one. Ties of names go to the one that
// sorts first, so that the answer does not depend on map order.
func (t Tally) BLAS(side string) string {
	var blas string
	for _, byW := range t[side] {
		for _, res := range byW {
			if b := blasThreads.ReplaceAllString(res.BLAS, ")"); b != "" && (blas == "" || b < blas) {
				blas = b
			}
		}
	}
	return blas
}

// Machine describes the machine a benchmark ran on.
type Machine struct {
	CPU              string // model name, "with AVX-512" when it has AVX-512F
	CPUs             int    // logical CPUs
	OS               string // the distribution's PRETTY_NAME, else GOOS
	Go, GOOS, GOARCH string
}

// ThisMachine describes this machine (Linux: /proc/cpuinfo,
// /etc/os-release).
func ThisMachine() Machine {
	m := Machine{CPU: "CPU unknown", CPUs: runtime.NumCPU(), OS: runtime.GOOS, Go: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		m.CPU = cpuModel(f)
		f.Close()
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		m.OS = osName(string(b), m.OS)
	}
	return m
}

// cpuModel reads the model name of a /proc/cpuinfo.
func cpuModel(r io.Reader) string {
	model, avx512 := "CPU unknown", false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.TrimSpace(v)
		case "flags":
			avx512 = avx512 || strings.Contains(v, " avx512f")
		}
	}
	if avx512 {
		model += " with AVX-512"
	}
	return model
}

// osName reads PRETTY_NAME of an /etc/os-release; otherwise it is
// fallback.
func osName(osRelease, fallback string) string {
	for line := range strings.SplitSeq(osRelease, "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return fallback
}
