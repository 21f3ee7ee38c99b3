package extest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

// RunTwiceMasked is RunTwice for examples whose report.md and
// summary.json hold wall times and the -workers value (MaskTimes): it
// compares the folders with SameFilesMasked and also returns how many
// files it compared.
func RunTwiceMasked[R any](t testing.TB, run func(dir string, first bool) (R, error), skip ...string) (R, string, int) {
	t.Helper()
	res, dir, dir2 := runBoth(t, run)
	return res, dir, SameFilesMasked(t, dir, dir2, MaskTimes, skip...)
}

// runBoth runs run(dir, true) and run(dir2, false) in two new temporary
// folders, failing t if either fails.
func runBoth[R any](t testing.TB, run func(dir string, first bool) (R, error)) (res R, dir, dir2 string) {
	t.Helper()
	dir, dir2 = t.TempDir(), t.TempDir()
	res, err := run(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(dir2, false); err != nil {
		t.Fatal(err)
	}
	return res, dir, dir2
}

var (
	wallTime = regexp.MustCompile(`("[a-z_.]*train_seconds": |took )[0-9.e+-]+`)
	workers  = regexp.MustCompile(`(-workers\s+)[0-9]+`)
)

// MaskTimes is a mask for SameFilesMasked: in report.md and summary.json
// it replaces the wall times (the values of the keys ending in
// train_seconds, "took 1.23 s") and the number after -workers, which two
// runs of one configuration with different -workers do not share.
func MaskTimes(rel string, b []byte) []byte {
	if rel != "report.md" && rel != "summary.json" {
		return b
	}
	return workers.ReplaceAll(wallTime.ReplaceAll(b, []byte("${1}T")), []byte("${1}W"))
}

// UnclearClaims fails t unless dir's summary.json lists n claims, all
// with the verdict unclear (a run with too few seeds for a sign test to
// decide), and returns them.
func UnclearClaims(t testing.TB, dir string, n int) []report.Claim {
	t.Helper()
	var s struct {
		Claims []report.Claim `json:"claims"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil || len(s.Claims) != n {
		t.Errorf("%d claims in summary.json (%v), want %d", len(s.Claims), err, n)
	}
	for _, c := range s.Claims {
		if c.Verdict != report.Unclear {
			t.Errorf("claim %q: verdict %q, want unclear", c.Claim, c.Verdict)
		}
	}
	return s.Claims
}

// BlockParams is the number of parameters of a pre-LN Transformer block
// of width d whose MLP has inner width h, counted by hand: two LayerNorms
// (4d), attention (d·3d + 3d + d·d + d) and the MLP (d·h + h + h·d + d;
// gated, one more input projection d·h + h).
func BlockParams(d, h int, gated bool) int {
	mlp := d*h + h + h*d + d
	if gated {
		mlp += d*h + h
	}
	return 4*d + d*3*d + 3*d + d*d + d + mlp
}
