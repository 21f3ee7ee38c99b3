package main

import (
	"encoding/csv"
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
	for _, bad := range []string{"gelu/exact", "gelu/exact/float16", "conv/3x3/float32", "ffn/64x32/float32/x"} {
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
		if w.fam.unit == "Melem/s" {
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
