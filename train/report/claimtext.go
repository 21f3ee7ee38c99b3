package report

// Claims whose words live in the report template: the program computes the
// numbers and the verdict, the template says what was claimed and what was
// measured, so that no prose is assembled with fmt.Sprintf.

import (
	"fmt"
	"strings"
	"text/template"
)

// ClaimFrom records a claim (see Claim) whose text is in the report
// template t (ParseTemplate): the templates "claim <id>" and
// "measured <id>", executed with data, give Claim.Claim and
// Claim.Measured. A claim is one line of the claims table, so the text may
// be wrapped over lines in the template: every line is trimmed, blank lines
// are dropped, and the lines are joined with single spaces.
//
//	{{define "claim relu_zero"}}for ReLU at z = −1, a'(z) = 0{{end}}
//	{{define "measured relu_zero"}}
//	∂L/∂w through the graph: {{num .DW}}
//	{{end}}
//
//	r.ClaimFrom(reportTmpl, "relu_zero", "000 (principles)", report.VerdictOf(dw == 0), data)
func (r *Report) ClaimFrom(t *template.Template, id, source string, verdict Verdict, data any) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	claim, measured, err := ClaimText(t, id, data)
	if err != nil {
		return r.fail(err)
	}
	return r.Claim(Claim{Source: source, Claim: claim, Measured: measured, Verdict: verdict})
}

// ClaimText returns the claim and measurement texts ClaimFrom records: the
// templates "claim <id>" and "measured <id>" of t executed with data, each
// made one line.
func ClaimText(t *template.Template, id string, data any) (claim, measured string, err error) {
	if t == nil {
		return "", "", fmt.Errorf("report: claim %q: nil template", id)
	}
	var out [2]string
	for i, part := range []string{"claim", "measured"} {
		name := part + " " + id
		if t.Lookup(name) == nil {
			return "", "", fmt.Errorf("report: claim %q: template %s has no {{define %q}}", id, t.Name(), name)
		}
		var b strings.Builder
		if err := t.ExecuteTemplate(&b, name, data); err != nil {
			return "", "", fmt.Errorf("report: claim %q: %w", id, err)
		}
		out[i] = oneLine(b.String())
	}
	return out[0], out[1], nil
}

// oneLine trims every line of s, drops the empty ones and joins the rest
// with single spaces.
func oneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " ")
}

// Decide is Confirmed when confirmed holds, else NotConfirmed when
// notConfirmed holds, else Unclear: for claims checked by a count ("GELU
// lower in every setting" against "higher in some").
func Decide(confirmed, notConfirmed bool) Verdict {
	switch {
	case confirmed:
		return Confirmed
	case notConfirmed:
		return NotConfirmed
	}
	return Unclear
}
