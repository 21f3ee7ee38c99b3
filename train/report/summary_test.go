package report_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestReadSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r, err := report.New(dir, "Values", report.WithCommand("./values", "-x"))
	if err != nil {
		t.Fatal(err)
	}
	r.Describe("a.*", "the a values")
	r.Describe("b", "b")
	want := map[string]float64{"a.one": 1.25, "a.nan": math.NaN(), "a.up": math.Inf(1), "b": math.Inf(-1)}
	for k, v := range want {
		r.Set(k, v)
	}
	r.Claim(report.Claim{Source: "doc", Claim: "b is −∞", Measured: "−∞", Verdict: report.Confirmed})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "Values" || s.Command != "./values -x" || len(s.Claims) != 1 || s.Claims[0].Verdict != report.Confirmed {
		t.Errorf("read back title %q, command %q, claims %+v", s.Title, s.Command, s.Claims)
	}
	for k, w := range want {
		got, ok := s.Number(k)
		if !ok || !(got == w || math.IsNaN(got) && math.IsNaN(w)) {
			t.Errorf("Number(%q) = %v, %v; want %v", k, got, ok, w)
		}
	}
	if _, ok := s.Number("missing"); ok {
		t.Error("Number of a missing key reports ok")
	}
	if u := s.Undocumented(); len(u) != 0 {
		t.Errorf("Undocumented() = %v, want none", u)
	}
	s.Values["c"], s.Values["a"] = 3.0, 4.0 // "a" does not match "a.*"
	if u := s.Undocumented(); !slices.Equal(u, []string{"a", "c"}) {
		t.Errorf("Undocumented() = %v, want [a c]", u)
	}
}

func TestReadSummaryErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := report.ReadSummary(dir); err == nil {
		t.Error("no error for a missing summary.json")
	}
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"values": [1, 2`), 0o644)
	if _, err := report.ReadSummary(dir); err == nil {
		t.Error("no error for a truncated summary.json")
	}
}
