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

	"github.com/geluproject/gelu/train/report"
)

// TestMain lets the test binary serve as the benchmark's child process.
func TestMain(m *testing.M) {
	if w := os.Getenv(childEnv); w != "" {
		os.Exit(childMain(w))
	}
	os.Exit(m.Run())
}

func TestParseWorkload(t *testing.T) {
	for _, name := range workloadNames(true, false) {
		if _, err := parseWorkload(name); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range []string{"gelu/exact", "gelu/exact/float16", "conv/3x3/float32", "ffn/64x32/float32/x",
		"gpt/L1-d16/float32", "gpt/L1-d16-h3-T8-B2/float32", "gpt/L0-d16-h2-T8-B2/float32", "gpt/L1-d16-h2-T8-B2x/float32", "gpt/L1-d16-h2-T8-B-2/float32"} {
		if _, err := parseWorkload(bad); err == nil {
			t.Errorf("parseWorkload(%q): no error", bad)
		}
	}
	for _, bad := range []string{"gelu/erf/float32", "ffn/64x32/float32", "gemm/0x1x1/float32", "mlp/shuffled5/float32", "mlp/random/float32", "copy/x/float32"} {
		w, err := parseWorkload(bad)
		if err != nil {
			t.Fatalf("parseWorkload(%q): %v", bad, err)
		}
		if _, _, err := w.fam.build(w.args, w.dt); err == nil {
			t.Errorf("building %q: no error", bad)
		}
	}
}

func TestSettings(t *testing.T) {
	ffn, _ := parseWorkload("ffn/8x4x16/float32")
	gelu, _ := parseWorkload("gelu/exact/float32")
	threads := []int{1, 2}
	for _, c := range []struct {
		w      workload
		pureGo bool
		want   []string
	}{
		{ffn, false, []string{"GOMAXPROCS=1, BLAS 1 thread", "GOMAXPROCS=1, BLAS 2 threads", "GOMAXPROCS=2, BLAS 1 thread", "GOMAXPROCS=2, BLAS 2 threads"}},
		{ffn, true, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
		{gelu, false, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
		{gelu, true, nil},
	} {
		var got []string
		for _, s := range oursSettings(c.w, threads, c.pureGo) {
			got = append(got, s.name)
			if c.pureGo && !slices.Contains(s.env, "GELU_BLAS=own") {
				t.Errorf("%s pure Go %q: env %v lacks GELU_BLAS=own", c.w.name, s.name, s.env)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s pureGo=%v: settings %q, want %q", c.w.name, c.pureGo, got, c.want)
		}
	}
	ts := torchSettings([]int{2})
	if len(ts) != 1 || ts[0].name != "2 threads" || !slices.Equal(ts[0].env, []string{"OMP_NUM_THREADS=2", "OPENBLAS_NUM_THREADS=2", "MKL_NUM_THREADS=2"}) {
		t.Errorf("torchSettings([2]) = %+v", ts)
	}
	if _, err := parseThreads("1,0"); err == nil {
		t.Error(`parseThreads("1,0"): no error`)
	}
}

func TestTallyBest(t *testing.T) {
	tl := tally{}
	tl.add(sideOurs, "w", "a", result{Seconds: 3})
	tl.add(sideOurs, "w", "b", result{Seconds: 2})
	tl.add(sideOurs, "w", "a", result{Seconds: 1.5}) // a later, better round
	tl.add(sideOurs, "w", "b", result{Seconds: 4})   // a worse round is not kept
	s, r, ok := tl.best(sideOurs, "w")
	if !ok || s != "a" || r.Seconds != 1.5 || tl[sideOurs]["w"]["b"].Seconds != 2 {
		t.Errorf("best = %q %v %v, b kept %v; want a 1.5 true, b 2", s, r.Seconds, ok, tl[sideOurs]["w"]["b"].Seconds)
	}
	tl.add(sideOurs, "w", "c", result{Seconds: 1.5 * hopeless})
	tl.add(sideOurs, "w", "d", result{Seconds: 1.5*hopeless + 0.1})
	if tl.skip(sideOurs, "w", "a") || tl.skip(sideOurs, "w", "c") || !tl.skip(sideOurs, "w", "d") || tl.skip(sideOurs, "w", "never run") {
		t.Errorf("skip: a %v, c (exactly %d× the best) %v, d (over) %v, never run %v; want false false true false", tl.skip(sideOurs, "w", "a"),
			hopeless, tl.skip(sideOurs, "w", "c"), tl.skip(sideOurs, "w", "d"), tl.skip(sideOurs, "w", "never run"))
	}
	if _, _, ok := tl.best(sideTorch, "w"); ok {
		t.Error("best of a side never measured: ok")
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
	py := "auto"
	if exec.Command("python3", "-c", "import torch").Run() != nil && exec.Command("/usr/bin/python3", "-c", "import torch").Run() != nil {
		t.Log("no python3 with torch: the PyTorch side is not checked")
		py = "none"
	}
	dir := t.TempDir()
	c := config{out: dir, reps: 1, rounds: 1, python: py, script: "bench_torch.py", threads: []int{1, 2}, quick: true, fallback: true}
	if err := run(c, []string{"benchmark", "-quick"}); err != nil {
		t.Fatal(err)
	}
	s, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	header, rows := readCSV(t, filepath.Join(dir, "settings.csv"))
	for _, name := range workloadNames(false, true) {
		w, _ := parseWorkload(name)
		key := strings.ReplaceAll(name, "/", ".")
		if !strings.Contains(string(md), "| "+name+" |") {
			t.Errorf("report.md has no row for %s", name)
		}
		row := rows[name]
		if row == nil {
			t.Fatalf("settings.csv has no row for %s", name)
		}
		for side, ours := range map[string]bool{sideOurs: true, sideTorch: false} {
			if side == sideTorch && py == "none" {
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
				if !strings.HasPrefix(col, side+": ") || row[i] == "—" {
					continue
				}
				x, err := strconv.ParseFloat(row[i], 64)
				if err != nil {
					t.Fatalf("settings.csv %s %s: %q", name, col, row[i])
				}
				if math.IsNaN(best) || (w.fam.unit == "ms") == (x < best) {
					best = x
				}
				if col == side+": "+setting && x != v {
					t.Errorf("%s: %s setting %q has %v in settings.csv, %v in the summary", name, side, setting, x, v)
				}
			}
			if v != best {
				t.Errorf("%s: %s reports %v (%s), but its best setting gave %v", name, side, v, setting, best)
			}
		}
		if py == "none" {
			continue
		}
		ours, _ := s.Number(key + ".ours")
		torch, _ := s.Number(key + ".pytorch")
		speedup, _ := s.Number(key + ".speedup_vs_pytorch")
		want := torch / ours // ms: PyTorch's time over ours
		if w.fam.unit != "ms" {
			want = ours / torch
		}
		if math.Abs(speedup-want) > 1e-9*want {
			t.Errorf("%s: speedup %v, want %v from ours %v and PyTorch %v", name, speedup, want, ours, torch)
		}
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
	if n, ok := s.Number("gpt." + gptQuickShape + ".float32.params"); !ok || n != float64(gptParamsClosedForm(1, 16, 8, gptVocab)) {
		t.Errorf("summary gpt params = %v (%v), want %d", n, ok, gptParamsClosedForm(1, 16, 8, gptVocab))
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

// TestGPTParams checks that this project's GPT and bench_torch.py's have
// the parameter count of the closed form: the same model on both sides.
func TestGPTParams(t *testing.T) {
	py := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import torch").Run() == nil {
			py = p
			break
		}
	}
	cases := []struct {
		args                 string
		layers, d, heads, tc int
	}{{gptShape, 4, 256, 8, 128}, {gptQuickShape, 1, 16, 2, 8}, {"L3-d24-h3-T5-B1", 3, 24, 3, 5}}
	var names []string
	for _, c := range cases {
		want := gptParamsClosedForm(c.layers, c.d, c.tc, gptVocab)
		got, err := gptParams(c.args)
		if err != nil || got != want {
			t.Errorf("%s: this project's GPT has %d parameters (%v), want %d", c.args, got, err, want)
		}
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
		want := gptParamsClosedForm(c.layers, c.d, c.tc, gptVocab)
		var reply struct {
			Name   string `json:"name"`
			Params int    `json:"params"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &reply); err != nil || reply.Name != names[i] || reply.Params != want {
			t.Errorf("%s: bench_torch.py's GPT has %+v (%v), want %d parameters", c.args, reply, err, want)
		}
	}
}

// TestGPTWork: a gpt step processes batch·T tokens, so one of 0.5 s runs at
// 2·batch·T tokens/s.
func TestGPTWork(t *testing.T) {
	w, err := parseWorkload("gpt/L1-d16-h2-T8-B2/float32")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.value(0.5); got != 32 || !w.throughput() {
		t.Errorf("gpt B2 T8 at 0.5 s per step: %v tokens/s (throughput unit %v), want 32", got, w.throughput())
	}
	if got := mustParse(t, "ffn/8x4x16/float32").value(0.5); got != 500 {
		t.Errorf("ffn at 0.5 s per step: %v, want 500 ms", got)
	}
}

func mustParse(t *testing.T, name string) workload {
	t.Helper()
	w, err := parseWorkload(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestSelectWorkloads(t *testing.T) {
	names := workloadNames(false, true)
	for _, c := range []struct {
		only []string
		want []string
	}{
		{nil, names},
		{[]string{"gpt"}, []string{"gpt/" + gptQuickShape + "/float32"}},
		{[]string{"mlp", " gpt"}, []string{"mlp/fixed/float32", "mlp/shuffled1024/float32", "gpt/" + gptQuickShape + "/float32"}},
		{[]string{"gpt/L2-d32-h4-T16-B4/float64", "gpt"}, []string{"gpt/L2-d32-h4-T16-B4/float64", "gpt/" + gptQuickShape + "/float32"}},
		{[]string{"gpt", "gpt"}, []string{"gpt/" + gptQuickShape + "/float32"}},
	} {
		got, err := selectWorkloads(names, c.only)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("selectWorkloads(%q) = %q (%v), want %q", c.only, got, err, c.want)
		}
	}
	for _, bad := range [][]string{{"conv"}, {""}} {
		if got, err := selectWorkloads(names, bad); err == nil {
			t.Errorf("selectWorkloads(%q) = %q, want an error", bad, got)
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
