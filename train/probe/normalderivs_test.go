package probe

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/report"
)

// Closed forms for X ~ N(0, 1): ReLU' is the indicator of x > 0, so
// E[f'] = E[f'²] = 1/2 and Var = 1/4. GELU' = Φ(x) + xφ(x): E[Φ(X)] = 1/2
// and E[Xφ(X)] = ∫ xφ(x)² dx = 0 (odd), so E[f'] = 1/2, and
// E[f'²] = 1/3 + 2/(3√3·π) (Hendrycks and Gimpel's GELU, a known integral).
func TestNormalDerivsClosedForms(t *testing.T) {
	r, err := report.New(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	acts := []activation.Activation{activation.ReLU, activation.GELU}
	profiles, table, series, err := NormalDerivs(r, "n.", acts)
	if err != nil {
		t.Fatal(err)
	}
	geluSq := 1.0/3 + 2/(3*math.Sqrt(3)*math.Pi)
	want := map[string]float64{"n.relu.E_d1": 0.5, "n.relu.E_d1sq": 0.5, "n.relu.Var_d1": 0.25,
		"n.gelu.E_d1": 0.5, "n.gelu.E_d1sq": geluSq, "n.gelu.Var_d1": geluSq - 0.25}
	for k, v := range want {
		if got := r.Get(k); math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if len(profiles) != 2 || profiles[1].Activation != activation.GELU {
		t.Fatalf("profiles: got %d, want ReLU then GELU", len(profiles))
	}
	if len(table.Header) != 4 || len(table.Rows) != 2 || table.Rows[0][0] != "ReLU" || table.Rows[1][0] != "GELU" {
		t.Fatalf("table: header %v rows %v", table.Header, table.Rows)
	}
	if c := table.Rows[0][1].(string); !strings.HasPrefix(c, "0.5") || !strings.Contains(c, "±") {
		t.Errorf("ReLU E[f'] cell %q, want 0.5 ± error", c)
	}
	// The integrand at x = 0 for GELU: GELU'(0) = 1/2, φ(0) = 1/√(2π).
	s := series[1]
	if len(s.X) != 801 || s.X[0] != -4 || s.X[800] != 4 || s.Name != "GELU" {
		t.Fatalf("series: %d points on [%v, %v], name %q", len(s.X), s.X[0], s.X[len(s.X)-1], s.Name)
	}
	if want := 0.25 / math.Sqrt(2*math.Pi); math.Abs(s.Y[400]-want) > 1e-12 {
		t.Errorf("GELU integrand at 0 = %v, want %v", s.Y[400], want)
	}
}
