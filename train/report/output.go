package report

// The files written by Close: summary.json and report.md.

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

func (r *Report) writeSummary(w io.Writer) error {
	descriptions := map[string]string{}
	for _, d := range r.docs {
		descriptions[d.Pattern] = d.Description
	}
	files := sortedKeys(r.files)
	files = slices.DeleteFunc(files, func(f string) bool { return f == "claims.csv" && len(r.claims) == 0 })
	claims := r.claims
	if claims == nil {
		claims = []Claim{}
	}
	s := struct {
		Title   string               `json:"title"`
		Command string               `json:"command"`
		Files   []string             `json:"files"`
		Keys    map[string]string    `json:"keys"`
		Values  map[string]any       `json:"values"`
		Tables  map[string]tableJSON `json:"tables"`
		Claims  []Claim              `json:"claims"`
	}{r.title, r.command, files, descriptions, r.values, r.tables, claims}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

func (r *Report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n# %s\n\n", r.command, r.title)
	if len(r.claims) > 0 {
		b.WriteString("## Claims from the source documents, checked\n\n| source | claim | measured | verdict |\n| --- | --- | --- | --- |\n")
		for _, c := range r.claims {
			v := string(c.Verdict)
			if c.Verdict == Confirmed || c.Verdict == NotConfirmed {
				v = "**" + v + "**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(c.Source), mdEscape(c.Claim), mdEscape(c.Measured), v)
		}
		b.WriteString("\nAlso in [claims.csv](claims.csv).\n\n")
	}
	for _, blk := range r.blocks {
		b.WriteString(blk + "\n\n")
	}
	if len(r.docs) > 0 {
		b.WriteString("## Summary values\n\n[summary.json](summary.json) holds the values of these keys at full precision under `values`, every table under `tables` and the claims under `claims`.\n\n| key | meaning |\n| --- | --- |\n")
		for _, d := range r.docs {
			fmt.Fprintf(&b, "| `%s` | %s |\n", d.Pattern, mdEscape(d.Description))
		}
		b.WriteString("\n")
	}
	if len(r.errs) > 0 {
		b.WriteString("## Errors\n\nThis report is incomplete:\n\n")
		for _, e := range r.errs {
			b.WriteString("- " + mdEscape(e.Error()) + "\n")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}
