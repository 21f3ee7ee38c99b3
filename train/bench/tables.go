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

// Overview is the table of every workload, each side at its best setting
// (named beside it), the speedup over the peer (its time ÷ ours), and the
// peak RSS and allocations of this project's child at its best setting.
// peerName heads the peer's column; ownGEMM adds the own GEMM's. It sets
// the summary keys <workload key>.ours, .ours_setting, .peak_rss_mb,
// .allocs_per_step, .alloc_bytes_per_step, .pure_go, .pytorch,
// .pytorch_setting and .speedup_vs_pytorch.
func (t Tally) Overview(r *report.Report, ws []Workload, peerName string, ownGEMM bool) report.TableData {
	header := []string{"workload", "unit", Ours, "our setting"}
	if ownGEMM {
		header = append(header, OwnGEMM)
	}
	header = append(header, peerName, "PyTorch setting", "speedup vs PyTorch", "peak RSS MB", "allocs/step")
	var rows [][]any
	for _, w := range ws {
		key := w.Key()
		oset, o, _ := t.Best(Ours, w.Name)
		row := []any{w.Name, w.Family.Unit, w.Value(o.Seconds), oset}
		r.Set(key+".ours", w.Value(o.Seconds))
		r.Set(key+".ours_setting", oset)
		r.Set(key+".peak_rss_mb", o.PeakMB)
		r.Set(key+".allocs_per_step", o.Allocs)
		r.Set(key+".alloc_bytes_per_step", o.AllocBytes)
		if ownGEMM {
			_, f, ok := t.Best(OwnGEMM, w.Name)
			row = append(row, Optional(ok, w.Value(f.Seconds)))
			if ok {
				r.Set(key+".pure_go", w.Value(f.Seconds))
			}
		}
		ts, tr, ok := t.Best(Peer, w.Name)
		row = append(row, Optional(ok, w.Value(tr.Seconds)), Optional(ok, ts), Optional(ok, tr.Seconds/o.Seconds), o.PeakMB, o.Allocs)
		if ok {
			r.Set(key+".pytorch", w.Value(tr.Seconds))
			r.Set(key+".pytorch_setting", ts)
			r.Set(key+".speedup_vs_pytorch", tr.Seconds/o.Seconds)
		}
		rows = append(rows, row)
	}
	return report.TableData{Header: header, Rows: rows}
}

// Pair compares each workload of Family with its partner, a workload of
// another family (an ffn step with its matrix products alone, GELU with a
// copy moving the same bytes).
type Pair struct {
	Family  string
	Partner func(w Workload) string // the partner's workload name
	// Bytes, if set, is what the partner moves per step: the table's third
	// column is then the bandwidth our side's partner reached, in GB/s.
	Bytes  func(w Workload) float64
	Key    string   // summary key suffix of the ratio
	Header []string // the table's columns, as many as a row has
}

// Pairs has a row per workload of p.Family in ws: its args and dtype, the
// partner's GB/s (with p.Bytes), then for this project and for the peer
// the two values (in the workload's unit) and the ratio of their times,
// also set as summary key <workload key>.<p.Key>[_pytorch].
func (t Tally) Pairs(r *report.Report, ws []Workload, p Pair) report.TableData {
	var rows [][]any
	for _, w := range ws {
		if w.Family.Name != p.Family {
			continue
		}
		pair := p.Partner(w)
		row := []any{w.Args, w.Dtype.String()}
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
// tried, each at its best round in the workload's unit; — where a setting
// does not apply.
func (t Tally) SettingsTable(ws []Workload) report.TableData {
	type col struct{ side, setting string }
	var cols []col
	seen := map[col]bool{}
	for _, side := range []string{Ours, OwnGEMM, Peer} {
		for _, w := range ws {
			var names []string
			for s := range t[side][w.Name] {
				names = append(names, s)
			}
			// Setting names sort as the loops make them (GOMAXPROCS, then BLAS threads).
			slices.Sort(names)
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
		header = append(header, c.side+": "+c.setting)
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

// BLAS is this project's matrix-product backend as its children reported
// it, without the thread count (which varies with the setting).
func (t Tally) BLAS() string {
	var blas string
	for _, byW := range t[Ours] {
		for _, res := range byW {
			if res.BLAS != "" {
				blas = blasThreads.ReplaceAllString(res.BLAS, ")")
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
