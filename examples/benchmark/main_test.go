package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/bench"
	"github.com/geluproject/gelu/train/report"
)

// TestMain lets the test binary serve as the benchmark's child process.
func TestMain(m *testing.M) {
	if code, ok := bench.Child(families); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestParseWorkload: every workload of a run, -scaling included, is a
// name of the table, and the builders reject bad args of each family.
func TestParseWorkload(t *testing.T) {
	for _, name := range workloadNames(true, false) {
		if _, err := families.Parse(name); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range []string{"gpt/L1-d16/float32", "gpt/L1-d16-h3-T8-B2/float32", "gpt/L0-d16-h2-T8-B2/float32", "gpt/L1-d16-h2-T8-B2x/float32", "gpt/L1-d16-h2-T8-B-2/float32",
		"matmul/8x4x16/float32", "matmul/8x4x16-NX/float32"} {
		if _, err := families.Parse(bad); err == nil {
			t.Errorf("families.Parse(%q): no error", bad)
		}
	}
	for _, bad := range []string{"gelu/erf/float32", "ffn/64x32/float32", "gemm/0x1x1/float32", "mlp/shuffled5/float32", "mlp/random/float32", "copy/x/float32", "peak/x/float32"} {
		w, err := families.Parse(bad)
		if err != nil {
			t.Fatalf("families.Parse(%q): %v", bad, err)
		}
		if _, _, err := w.Family.Build(w.Args, w.Dtype); err == nil {
			t.Errorf("building %q: no error", bad)
		}
	}
}

// TestQuickReport runs the whole program at -quick and checks the report:
// every workload, each side's best setting named and really the best of
// the settings table, and the speedup computed from the two sides' values.
func TestQuickReport(t *testing.T) {
	if testing.Short() {
		t.Skip("about 30 s of child processes")
	}
	if os.Getenv("GELU_TEST_EXEC") != "" {
		// The program starts its own binary for every workload; under an
		// emulator (the arm64 run) that binary cannot be executed directly,
		// and a speed comparison there would mean nothing anyway.
		t.Skip("under an emulator (GELU_TEST_EXEC set): the benchmark's child processes cannot run")
	}
	dir := t.TempDir()
	// One thread count keeps the settings few (both owners of the cores on
	// OpenBLAS, PyTorch as installed and at 2 and 2 threads); the sweep's
	// pairs are train/bench's tests.
	c := config{out: dir, reps: 1, rounds: 1, python: "auto", script: "bench_torch.py", threads: []int{2}, quick: true, fallback: true}
	if err := run(c, []string{"benchmark", "-quick"}); err != nil {
		t.Fatal(err)
	}
	s, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	// What the run compared is what it decided at its start and recorded
	// (a library installed during the run changes nothing): the checks
	// below hold the tables to that record.
	defBLAS, _ := s.Values["run.blas_default"].(string)
	otherBLAS, okOther := s.Values["run.blas_other"].(string)
	torchVersion, okTorch := s.Values["run.pytorch_version"].(string)
	if defBLAS == "" || !okOther || !okTorch {
		t.Fatalf("summary run.blas_default %q, run.blas_other %q (%v), run.pytorch_version %q (%v): want the run's decisions recorded",
			defBLAS, otherBLAS, okOther, torchVersion, okTorch)
	}
	withTorch := torchVersion != ""
	if !withTorch {
		t.Log("the run found no python3 with torch: the PyTorch side is not checked")
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The report says when it ran: the test's run ended today (or, at
	// midnight UTC, yesterday).
	now := time.Now().UTC()
	if today, before := now.Format(time.DateOnly), now.Add(-time.Hour).Format(time.DateOnly); !strings.Contains(string(md), "run finished "+today+" (UTC)") && !strings.Contains(string(md), "run finished "+before+" (UTC)") {
		t.Errorf("report.md does not say the run finished on %s (UTC)", today)
	}
	header, rows := readCSV(t, filepath.Join(dir, "settings.csv"))
	// PyTorch ran as installed, among its settings.
	if withTorch && !slices.ContainsFunc(header, func(col string) bool { return strings.HasPrefix(col, bench.Peer+": "+bench.AsInstalled+" (") }) {
		t.Errorf("settings.csv has no column for PyTorch as installed: %q", header)
	}
	for _, name := range workloadNames(false, true) {
		w, _ := families.Parse(name)
		key := w.Key()
		if !strings.Contains(string(md), "| "+name+" |") {
			t.Errorf("report.md has no row for %s", name)
		}
		row := rows[name]
		if row == nil {
			t.Fatalf("settings.csv has no row for %s", name)
		}
		if w.Family.NoPeer {
			continue // their own tables: checked below
		}
		// This project's columns are headed with its default BLAS, "this
		// project (own GEMM)" say; the other BLAS's "this project with …".
		for side, ours := range map[string]bool{bench.Ours + " (": true, bench.Peer: false} {
			if side == bench.Peer && !withTorch {
				if _, ok := s.Values[key+".pytorch"]; ok {
					t.Errorf("%s: summary has %s.pytorch, but the run recorded no PyTorch", name, key)
				}
				continue
			}
			suffix := map[bool]string{true: "ours", false: "pytorch"}[ours]
			setting, _ := s.Values[key+"."+suffix+"_setting"].(string)
			v, ok := s.Number(key + "." + suffix)
			if setting == "" || !ok {
				t.Errorf("%s: %s value %v (%v) setting %q", name, side, v, ok, setting)
				continue
			}
			// The named setting's value is the best among the side's columns.
			best := math.NaN()
			for i, col := range header {
				if !strings.HasPrefix(col, side) || !strings.Contains(col, ": ") || row[i] == "—" {
					continue
				}
				x, err := strconv.ParseFloat(row[i], 64)
				if err != nil {
					t.Fatalf("settings.csv %s %s: %q", name, col, row[i])
				}
				if math.IsNaN(best) || (w.Family.Unit == "ms") == (x < best) {
					best = x
				}
				if strings.HasSuffix(col, ": "+setting) && x != v {
					t.Errorf("%s: %s setting %q has %v in settings.csv, %v in the summary", name, side, setting, x, v)
				}
			}
			if v != best {
				t.Errorf("%s: %s reports %v (%s), but its best setting gave %v", name, side, v, setting, best)
			}
		}
		if !withTorch {
			continue
		}
		ours, _ := s.Number(key + ".ours")
		torch, _ := s.Number(key + ".pytorch")
		speedup, _ := s.Number(key + ".speedup_vs_pytorch")
		want := torch / ours // ms: PyTorch's time over ours
		if w.Family.Unit != "ms" {
			want = ours / torch
		}
		if math.Abs(speedup-want) > 1e-9*want {
			t.Errorf("%s: speedup %v, want %v from ours %v and PyTorch %v", name, speedup, want, ours, torch)
		}
	}
	// The headline is the default BLAS the run decided on, named; the
	// other BLAS, if the run decided to compare one, in its own column with
	// its name, else nowhere.
	for _, name := range workloadNames(false, true) {
		w, _ := families.Parse(name)
		if !w.Family.BLAS || w.Family.NoPeer {
			continue
		}
		if got, _ := s.Values[w.Key()+".ours_blas_name"].(string); got != defBLAS {
			t.Errorf("summary %s.ours_blas_name = %q, want the run's default %q", w.Key(), got, defBLAS)
		}
		got, ok := s.Values[w.Key()+".other_blas_name"].(string)
		if otherBLAS == "" && ok {
			t.Errorf("summary %s.other_blas_name = %q, but the run recorded no other BLAS", w.Key(), got)
		}
		if otherBLAS != "" && !strings.HasPrefix(got, otherBLAS) {
			t.Errorf("summary %s.other_blas_name = %q, want the run's other BLAS %q", w.Key(), got, otherBLAS)
		}
	}
	// The products of the quick ffn shape, each on the own GEMM (and on
	// OpenBLAS where it loads), with the rate its time gives and a share
	// of the peak where the peak is known.
	_, gemms := readCSV(t, filepath.Join(dir, "gemms.csv"))
	for _, args := range products(true).args {
		for _, dt := range []string{"float32", "float64"} {
			key := "matmul." + args + "." + dt + "."
			own, ok := s.Number(key + "own_gflops")
			if !ok || !(own > 0) {
				t.Errorf("summary %sown_gflops = %v (%v), want a rate", key, own, ok)
			}
			if _, ok := gemms[args]; !ok {
				t.Errorf("gemms.csv has no row for %s", args)
			}
			if _, ok := s.Number(key + "own_pct_peak"); ok != (gemm.PeakISA() != "") {
				t.Errorf("summary %sown_pct_peak set: %v, want it where the peak is known", key, ok)
			}
			if ob, ok := s.Number(key + "openblas_gflops"); ok {
				if r, _ := s.Number(key + "own_over_openblas"); math.Abs(r-own/ob) > 1e-9*r {
					t.Errorf("summary %sown_over_openblas = %v, want %v / %v", key, r, own, ob)
				}
			}
		}
	}
	// bfloat16 autocast against float32: the ffn, gemm and gpt workloads,
	// this project's ratio always, PyTorch's where it ran.
	for _, k := range []string{"ffn.64x32x128.bfloat16.bf16_over_float32", "gemm.64x32x128.bfloat16.bf16_over_float32", "gpt." + gptQuickShape + ".bfloat16.bf16_over_float32"} {
		if v, ok := s.Number(k); !ok || !(v > 0) {
			t.Errorf("summary %s = %v (%v), want a positive ratio", k, v, ok)
		}
	}
	if !strings.Contains(string(md), "## bfloat16 autocast against float32") {
		t.Error("report.md has no bfloat16 section")
	}
	for _, k := range []string{"ffn.64x32x128.float32.step_over_gemm", "gelu.exact.float64.gelu_over_copy"} {
		if v, ok := s.Number(k); !ok || !(v > 0) {
			t.Errorf("summary %s = %v (%v), want a positive ratio", k, v, ok)
		}
	}
	// The GPT section: its row, the parameter count of the quick model
	// (L1-d16-h2-T8-B2, closed form as in TestGPTParams), and tokens/s
	// that is the batch·T = 16 tokens of a step over its time.
	if !strings.Contains(string(md), "## GPT training step") || !strings.Contains(string(md), "| "+gptQuickShape+" | float32 |") {
		t.Errorf("report.md has no GPT section with a row for %s", gptQuickShape)
	}
	if n, ok := s.Number("gpt." + gptQuickShape + ".float32.params"); !ok || n != float64(gptParamsClosedForm(1, 16, 8, bench.GPTVocab)) {
		t.Errorf("summary gpt params = %v (%v), want %d", n, ok, gptParamsClosedForm(1, 16, 8, bench.GPTVocab))
	}
	_, gr := readCSV(t, filepath.Join(dir, "gpt.csv"))
	row := gr[gptQuickShape]
	if row == nil {
		t.Fatalf("gpt.csv has no row for %s", gptQuickShape)
	}
	tps, err1 := strconv.ParseFloat(row[4], 64)
	ms, err2 := strconv.ParseFloat(row[6], 64)
	if err1 != nil || err2 != nil || math.Abs(tps*ms/1e3-2*8) > 1e-9*16 {
		t.Errorf("gpt.csv: %s tokens/s × %s ms/step = %v tokens, want batch·T = 16", row[4], row[6], tps*ms/1e3)
	}
	if a, ok := s.Number("gpt." + gptQuickShape + ".float32.allocs_per_step"); !ok || a < 0 {
		t.Errorf("summary gpt allocs_per_step = %v (%v), want a count ≥ 0", a, ok)
	}
}

// gptParamsClosedForm counts nanoGPT's parameters by hand: the tied token
// table V·d, the positions T·d, per block two LayerNorms (2·2d), c_attn
// (3d² + 3d), attn c_proj (d² + d), c_fc (4d² + 4d) and mlp c_proj (4d² +
// d), that is 12d² + 13d, and ln_f (2d).
func gptParamsClosedForm(layers, d, t, vocab int) int {
	return vocab*d + t*d + layers*(12*d*d+13*d) + 2*d
}

// TestGPTParams checks that bench_torch.py's GPT has the parameter count
// of the closed form, as this project's has (train/bench's
// TestGPTParams): the same model on both sides.
func TestGPTParams(t *testing.T) {
	py, err := bench.FindPython("auto") // the program's own choice of python
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args                 string
		layers, d, heads, tc int
	}{{gptShapes[0], 4, 256, 8, 128}, {gptShapes[1], 8, 256, 8, 256}, {gptQuickShape, 1, 16, 2, 8}, {"L3-d24-h3-T5-B1", 3, 24, 3, 5}}
	var names []string
	for _, c := range cases {
		names = append(names, "gpt/"+c.args+"/float32")
	}
	if py == "" {
		t.Skip("no python3 with torch: the PyTorch model is not checked")
	}
	out, err := exec.Command(py, "bench_torch.py", "--params", "--workloads", strings.Join(names, ",")).Output()
	if err != nil {
		t.Fatalf("bench_torch.py --params: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("bench_torch.py --params printed %q, want %d lines", out, len(cases))
	}
	for i, c := range cases {
		want := gptParamsClosedForm(c.layers, c.d, c.tc, bench.GPTVocab)
		var reply struct {
			Name   string `json:"name"`
			Params int    `json:"params"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &reply); err != nil || reply.Name != names[i] || reply.Params != want {
			t.Errorf("%s: bench_torch.py's GPT has %+v (%v), want %d parameters", c.args, reply, err, want)
		}
	}
}

// readCSV returns the header and the rows by their first cell.
func readCSV(t *testing.T, path string) ([]string, map[string][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %v, %d records", path, err, len(recs))
	}
	rows := map[string][]string{}
	for _, r := range recs[1:] {
		rows[r[0]] = r
	}
	return recs[0], rows
}

// TestProducts: the matmul workloads are the 2 × 6 products of the two ffn
// shapes and the 9 distinct ones of the mlp (3 per layer kind: 784→128,
// 128→128 seven times, 128→10), each listed once with where it comes from.
func TestProducts(t *testing.T) {
	set := products(false)
	if len(set.args) != 21 || len(set.in) != 21 {
		t.Errorf("products: %d (%d labelled), want 21", len(set.args), len(set.in))
	}
	for args, want := range map[string]string{"512x1024x256-NT": "ffn 512x256x1024 x·W1ᵀ", "3072x768x256-TN": "ffn 256x768x3072 dhᵀ·x",
		"128x128x128-NT": "mlp 128→128 x·Wᵀ", "10x128x128-TN": "mlp 128→10 dyᵀ·x"} {
		if got := set.in[args]; got != want {
			t.Errorf("products: %s in %q, want %q", args, got, want)
		}
	}
	if q := products(true); len(q.args) != 6 || q.in["64x128x32-NT"] != "ffn 64x32x128 x·W1ᵀ" {
		t.Errorf("quick products: %q", q.args)
	}
}
