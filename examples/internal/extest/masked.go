package extest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

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
