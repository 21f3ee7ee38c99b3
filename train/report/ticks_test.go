package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// labels returns the labelled ticks as one string, checking that each
// label reads back as exactly its tick's value and lies in [min, max].
func labels(t *testing.T, ticks []plot.Tick, min, max float64) string {
	t.Helper()
	var out []string
	for _, tk := range ticks {
		if tk.Label == "" {
			continue
		}
		if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || v != tk.Value {
			t.Errorf("label %q for a tick at %v", tk.Label, tk.Value)
		}
		if tol := 1e-12 * math.Max(math.Abs(min), math.Abs(max)); tk.Value < min-tol || tk.Value > max+tol {
			t.Errorf("tick %v outside [%v, %v]", tk.Value, min, max)
		}
		out = append(out, tk.Label)
	}
	return strings.Join(out, " ")
}

func TestLinearTickLabels(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     string
	}{
		// gonum's default put labels at 0.65, 0.85, 1.05 and printed the last "1.1".
		{0.63, 1.17, "0.7 0.8 0.9 1.0 1.1"},
		{1, 1.1, "1.00 1.02 1.04 1.06 1.08 1.10"},
		{-4, 4, "-4 -2 0 2 4"},
		{-0.13, 1.12, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0, 3e6, "0 500000 1e+06 1.5e+06 2e+06 2.5e+06 3e+06"},
		{0.31, 0.33, "0.310 0.315 0.320 0.325 0.330"},
		{-3e-5, 1e-5, "-3e-05 -2e-05 -1e-05 0 1e-05"},
	} {
		ticks := linTicks{}.Ticks(c.min, c.max)
		if got := labels(t, ticks, c.min, c.max); got != c.want {
			t.Errorf("[%v, %v]: labels %q, want %q", c.min, c.max, got, c.want)
		}
		if len(ticks) <= strings.Count(c.want, " ")+1 {
			t.Errorf("[%v, %v]: no unlabelled ticks between the labels", c.min, c.max)
		}
	}
	if len(linTicks{}.Ticks(1, 1)) != 0 || len(linTicks{}.Ticks(0, math.Inf(1))) != 0 {
		t.Error("ticks for an empty or infinite range")
	}
}

func TestLogTickLabels(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     string
	}{
		{3e-6, 0.02, "1e-05 0.0001 0.001 0.01"},
		// Less than two decades: 2 and 5 times the powers too.
		{0.2, 5, "0.2 0.5 1 2 5"},
		{0.15, 12, "0.2 0.5 1 2 5 10"},
		// Less than a decade: every digit.
		{0.25, 0.95, "0.3 0.4 0.5 0.6 0.7 0.8 0.9"},
		// 13 decades: every second power.
		{1e-12, 0.05, "1e-12 1e-10 1e-08 1e-06 0.0001 0.01"},
		// 301 decades (an underflowing series): every 50th, and no minor ticks at each digit.
		{1e-300, 1, "1e-300 1e-250 1e-200 1e-150 1e-100 1e-50 1"},
		// A sliver of one decade falls back to linear ticks.
		{0.31, 0.33, "0.310 0.315 0.320 0.325 0.330"},
	} {
		ticks := logTicks{}.Ticks(c.min, c.max)
		if got := labels(t, ticks, c.min, c.max); got != c.want {
			t.Errorf("[%v, %v]: labels %q, want %q", c.min, c.max, got, c.want)
		}
		if len(ticks) > 400 {
			t.Errorf("[%v, %v]: %d ticks", c.min, c.max, len(ticks))
		}
	}
	// On 301 decades, unlabelled ticks every 10th power between the labels.
	if n := len(logTicks{}.Ticks(1e-300, 1)); n != 31 {
		t.Errorf("%d ticks on 301 decades, want 31", n)
	}
	// 11 powers 1e-12 … 0.01, 8 digits in each decade from 1e-12 to 1e-3, and 0.02 … 0.05.
	if n := len(logTicks{}.Ticks(1e-12, 0.05)); n != 11+10*8+4 {
		t.Errorf("%d ticks on 11 decades, want 95", n)
	}
}
