package experiment

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

// Main refuses words left after the flags (a mistyped flag such as
// "steps 20" would otherwise run the whole default experiment).
func TestMainParsingRefusesArguments(t *testing.T) {
	type config struct {
		Flags
		Steps int `flag:"steps" help:"h"`
	}
	for _, args := range [][]string{{"extra"}, {"-steps", "20", "extra", "-seed", "2"}} {
		c := config{Flags: Flags{Out: "out/x", Seed: 1}, Steps: 600}
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		err := parseFlags(fs, args, &c.Flags, 0, &c)
		if err == nil || !strings.Contains(err.Error(), `"extra"`) {
			t.Errorf("%q: error %v, want one naming the unexpected argument \"extra\"", args, err)
		}
	}
}

// ExitGrid: a shard's share done is status 0 with its message on stdout,
// another error status 1 on stderr, success the wrote line and the
// report's claims, a line each, on stdout.
func TestExitGrid(t *testing.T) {
	dir := t.TempDir()
	r, err := report.New(dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	r.Claim(report.Claim{Source: "doc 1", Claim: "a > b", Measured: "a = 2, b = 1", Verdict: report.Confirmed})
	r.Claim(report.Claim{Source: "doc 2", Claim: "c ≈ 3", Measured: "c = 4", Verdict: report.NotConfirmed})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	incomplete := fmt.Errorf("shard 0/2 done: %w", ErrIncomplete)
	for _, tc := range []struct {
		err            error
		code           int
		stdout, stderr string
	}{
		{incomplete, 0, "x: shard 0/2 done: " + ErrIncomplete.Error() + "\n", ""},
		{errors.New("-epochs 0: want > 0"), 1, "", "x: -epochs 0: want > 0\n"},
		{nil, 0, "wrote out/report.md (4 runs)\nclaims checked (2):\n" +
			"  confirmed      a > b — measured: a = 2, b = 1 [doc 1]\n" +
			"  NOT confirmed  c ≈ 3 — measured: c = 4 [doc 2]\n", ""},
	} {
		var out, errOut strings.Builder
		called := false
		code := exitGrid(&out, &errOut, "x", dir, tc.err, func() string { called = true; return "wrote out/report.md (4 runs)" })
		if code != tc.code || out.String() != tc.stdout || errOut.String() != tc.stderr || called != (tc.err == nil) {
			t.Errorf("%v: status %d, stdout %q, stderr %q, wrote called %v; want %d, %q, %q, %v",
				tc.err, code, out.String(), errOut.String(), called, tc.code, tc.stdout, tc.stderr, tc.err == nil)
		}
	}
	// A report that cannot be read back is said on stderr; the status stays 0.
	var out, errOut strings.Builder
	if code := exitGrid(&out, &errOut, "x", filepath.Join(dir, "missing"), nil, func() string { return "wrote" }); code != 0 || !strings.Contains(errOut.String(), "reading the claims back") {
		t.Errorf("missing summary: status %d, stderr %q", code, errOut.String())
	}
}
