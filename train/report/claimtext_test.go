package report

import (
	"strings"
	"testing"
	"text/template"
)

// A claim from a template must be the claim the same words given to Claim
// make: same claims.csv row, same summary.json entry.
func TestClaimFromMatchesClaim(t *testing.T) {
	tmpl := template.Must(ParseTemplate("r", `Body.
{{define "claim zero"}}
  for ReLU at z = −1, a'(z) = 0
{{end}}
{{define "measured zero"}}
	∂L/∂w: {{num .DW}} (float64),
	{{.Steps}} steps{{range $i, $p := .Parts}}{{if $i}};{{end}} {{$p}}{{end}}

{{end}}`))
	data := struct {
		DW    float64
		Steps int
		Parts []string
	}{-0.0416577, 40, []string{"a", "b"}}
	claim, measured, err := ClaimText(tmpl, "zero", data)
	wantClaim, wantMeasured := "for ReLU at z = −1, a'(z) = 0", "∂L/∂w: -0.04166 (float64), 40 steps a; b"
	if err != nil || claim != wantClaim || measured != wantMeasured {
		t.Fatalf("ClaimText = %q, %q, %v; want %q, %q", claim, measured, err, wantClaim, wantMeasured)
	}
	r, err := New(t.TempDir(), "T")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ClaimFrom(tmpl, "zero", "000", Confirmed, data); err != nil {
		t.Fatal(err)
	}
	want := Claim{Source: "000", Claim: wantClaim, Measured: wantMeasured, Verdict: Confirmed}
	if len(r.claims) != 1 || r.claims[0] != want {
		t.Errorf("claims %+v, want %+v", r.claims, want)
	}
}

func TestClaimFromErrors(t *testing.T) {
	tmpl := template.Must(ParseTemplate("r", `{{define "claim a"}}x{{end}}{{define "measured a"}}{{.Missing}}{{end}}{{define "claim b"}}y{{end}}`))
	r, err := New(t.TempDir(), "T")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, want string }{
		{"a", "Missing"},                    // a field the data lacks
		{"b", `no {{define "measured b"}}`}, // half a claim
		{"c", `no {{define "claim c"}}`},    // no claim at all
	} {
		if err := r.ClaimFrom(tmpl, tc.id, "s", Unclear, map[string]int{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("claim %q: %v, want an error mentioning %s", tc.id, err, tc.want)
		}
	}
	if _, _, err := ClaimText(nil, "a", nil); err == nil {
		t.Error("nil template: no error")
	}
	if err := r.Close(); err == nil {
		t.Error("Close after failed claims: no error")
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		yes, no bool
		want    Verdict
	}{{true, false, Confirmed}, {true, true, Confirmed}, {false, true, NotConfirmed}, {false, false, Unclear}} {
		if got := Decide(tc.yes, tc.no); got != tc.want {
			t.Errorf("Decide(%v, %v) = %q, want %q", tc.yes, tc.no, got, tc.want)
		}
	}
}
