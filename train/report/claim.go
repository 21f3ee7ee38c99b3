package report

// Claims from source documents, checked against measurements: the part of a
// report that says plainly what was confirmed and what was not.

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Verdict is the outcome of checking a document's claim.
type Verdict string

// Verdicts: Confirmed when the measurement agrees with the claim at the
// precision the claim states, NotConfirmed when it disagrees, Unclear when
// the claim is too vague to test as stated (say why in Measured).
const (
	Confirmed    Verdict = "confirmed"
	NotConfirmed Verdict = "NOT confirmed"
	Unclear      Verdict = "unclear"
)

// VerdictOf is Confirmed if ok holds and NotConfirmed otherwise.
func VerdictOf(ok bool) Verdict {
	if ok {
		return Confirmed
	}
	return NotConfirmed
}

// Near is Confirmed when measured is within tol of claimed: for a claim
// stated to a few digits, tol is half a unit of its last digit ("≈ 0.42":
// 0.005), so a measurement is confirmed exactly when it rounds to the
// claim. NaN is never confirmed.
func Near(measured, claimed, tol float64) Verdict {
	return VerdictOf(math.Abs(measured-claimed) <= tol)
}

// Claim is a statement from a source document checked against a
// measurement.
type Claim struct {
	Source   string  `json:"source"`   // which document, where
	Claim    string  `json:"claim"`    // the document's statement, as a claim
	Measured string  `json:"measured"` // what was measured, with numbers
	Verdict  Verdict `json:"verdict"`
}

// Claim records a checked claim. Claims are shown as a table right after
// the title of report.md, and written to claims.csv and summary.json.
func (r *Report) Claim(c Claim) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	if r.closed {
		return r.fail(fmt.Errorf("report: Claim after Close"))
	}
	if c.Claim == "" || c.Measured == "" {
		return r.fail(fmt.Errorf("report: Claim from %q needs the claim and the measurement", c.Source))
	}
	switch c.Verdict {
	case Confirmed, NotConfirmed, Unclear:
	default:
		return r.fail(fmt.Errorf("report: Claim %q: verdict %q, want report.Confirmed, NotConfirmed or Unclear", c.Claim, c.Verdict))
	}
	r.claims = append(r.claims, c)
	return nil
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

// WriteClaims writes the claims of a summary read back (ReadSummary) to w,
// a line each: verdict, claim, measurement and source, so that a program
// ends by saying what it found, not only where the report is.
func (s *Summary) WriteClaims(w io.Writer) error {
	if s == nil || len(s.Claims) == 0 {
		return nil
	}
	width := 0
	for _, c := range s.Claims {
		width = max(width, utf8.RuneCountInString(string(c.Verdict)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "claims checked (%d):\n", len(s.Claims))
	for _, c := range s.Claims {
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(string(c.Verdict)))
		fmt.Fprintf(&b, "  %s%s  %s — measured: %s [%s]\n", c.Verdict, pad, c.Claim, c.Measured, c.Source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
