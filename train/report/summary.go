package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// Summary is a summary.json read back, for programs that compare runs and
// for tests of the programs that wrote it.
type Summary struct {
	Title   string            `json:"title"`
	Command string            `json:"command"`
	Files   []string          `json:"files"`
	Keys    map[string]string `json:"keys"`   // key pattern → description
	Values  map[string]any    `json:"values"` // numbers; non-finite ones as "NaN", "+Inf", "-Inf"
	Claims  []Claim           `json:"claims"`
}

// ReadSummary reads dir/summary.json.
func ReadSummary(dir string) (*Summary, error) {
	p := filepath.Join(dir, "summary.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("report: %s: %w", p, err)
	}
	return &s, nil
}

// Undocumented returns, sorted, the value keys that no key pattern matches
// (Report.Close refuses to write such a summary).
func (s *Summary) Undocumented() []string {
	if s == nil {
		return nil
	}
	var out []string
	for k := range s.Values {
		documented := false
		for p := range s.Keys {
			if ok, _ := path.Match(p, k); ok {
				documented = true
				break
			}
		}
		if !documented {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Number returns the value of key; ok is false when the key is missing or
// its value is not a number.
func (s *Summary) Number(key string) (v float64, ok bool) {
	if s == nil {
		return 0, false
	}
	switch x := s.Values[key].(type) {
	case float64:
		return x, true
	case string:
		switch x {
		case "NaN":
			return math.NaN(), true
		case "+Inf":
			return math.Inf(1), true
		case "-Inf":
			return math.Inf(-1), true
		}
	}
	return 0, false
}
