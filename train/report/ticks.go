package report

// Axis ticks. gonum/plot's defaults round linear labels to a fixed number
// of digits (a tick at 1.05 reads "1.1"), label only powers of ten on a
// log axis (a plot spanning 0.2 to 5 gets one label), and label every
// power of ten however many decades the axis spans (hundreds of labels on
// top of each other). These tickers put labels at round numbers and print
// every label exactly.

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// linTicks labels multiples of a round step (1, 2 or 5 times a power of
// ten) chosen so that a linear axis gets 3 to 7 labels.
type linTicks struct{}

func (linTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || !finite(min) || !finite(max) {
		return nil
	}
	// The smallest round step giving at most 7 labels.
	e := int(math.Floor(math.Log10((max - min) / 7)))
	var mant float64
	for {
		for _, m := range []float64{1, 2, 5} {
			if math.Floor(max/step(m, e)+1e-9)-math.Ceil(min/step(m, e)-1e-9) <= 6 {
				mant = m
				break
			}
		}
		if mant != 0 {
			break
		}
		e++
	}
	dec := 0 // decimals that print every multiple of the step exactly
	if e < 0 {
		dec = -e
	}
	exp := math.Max(math.Abs(min), math.Abs(max)) >= 1e6 || step(mant, e) < 1e-4 // exponent form
	var ticks []plot.Tick
	s := step(mant, e)
	lo, hi := int64(math.Ceil(min/s-1e-9)), int64(math.Floor(max/s+1e-9))
	for k := lo; k <= hi; k++ {
		v := multiple(k, mant, e)
		label := strconv.FormatFloat(v, 'f', dec, 64)
		if exp {
			label = strconv.FormatFloat(v, 'g', -1, 64)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	// Unlabelled ticks between the labels: 4 or 5 intervals per step.
	div := int64(5)
	if mant == 2 {
		div = 4
	}
	for k := int64(math.Ceil(min/s*float64(div) - 1e-9)); float64(k) <= max/s*float64(div)+1e-9; k++ {
		if k%div != 0 {
			ticks = append(ticks, plot.Tick{Value: multiple(k, mant/float64(div), e)})
		}
	}
	return ticks
}

// step is mant·10^e.
func step(mant float64, e int) float64 { return multiple(1, mant, e) }

// multiple returns k·mant·10^e rounded once, so that 3·0.1 is 0.3 and not
// 0.30000000000000004 (k·mant is exact for the labelled mantissas 1, 2
// and 5).
func multiple(k int64, mant float64, e int) float64 {
	if e < 0 {
		return float64(k) * mant / math.Pow10(-e)
	}
	return float64(k) * mant * math.Pow10(e)
}

// logTicks labels a log axis: powers of ten, every second, fifth, ...
// one when there are more than 7 of them (with unlabelled ticks between), and also 2 and 5 times each
// power (or every digit) when the axis spans less than two decades.
// Labels are the shortest exact decimal: "0.01", "2e-05", "1e+06".
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0 && max > min) || !finite(max) {
		return nil
	}
	// Powers of ten inside [min, max], allowing for log10's rounding.
	lo := int(math.Ceil(math.Log10(min) - 1e-9))
	hi := int(math.Floor(math.Log10(max) + 1e-9))
	at := func(m, k int) float64 { v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(k), 64); return v }
	inside := func(v float64) bool { return v >= min*(1-1e-12) && v <= max*(1+1e-12) }
	var ticks []plot.Tick
	add := func(v float64, labelled bool) {
		if !inside(v) {
			return
		}
		t := plot.Tick{Value: v}
		if labelled {
			t.Label = strconv.FormatFloat(v, 'g', -1, 64)
		}
		ticks = append(ticks, t)
	}
	every := 1
	for _, e := range []int{1, 2, 3, 5, 10, 20, 25, 50, 100, 200, 250, 500} {
		if every = e; (hi-lo)/e+1 <= 7 {
			break
		}
	}
	digits := map[int]bool{} // the mantissas labelled besides 1
	if hi-lo < 2 {
		digits = map[int]bool{2: true, 5: true}
		if n := countLabels(min, max, at, lo-1, hi, digits); n < 3 {
			digits = map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true}
		}
	}
	minor := 1 // unlabelled ticks at every minor-th power: no more than about 40
	if hi-lo > 40 {
		minor = every / 5 // every is then at least 10
	}
	for k := lo - 1; k <= hi; k++ {
		if labelled := mod(k, every) == 0; labelled || mod(k, minor) == 0 {
			add(at(1, k), labelled)
		}
		if hi-lo <= 12 {
			for m := 2; m <= 9; m++ {
				add(at(m, k), digits[m])
			}
		}
	}
	if countLabels(min, max, at, lo-1, hi, digits) < 2 { // a sliver of one decade
		return linTicks{}.Ticks(min, max)
	}
	return ticks
}

// countLabels counts the labelled log ticks in [min, max].
func countLabels(min, max float64, at func(m, k int) float64, lo, hi int, digits map[int]bool) int {
	n := 0
	for k := lo; k <= hi; k++ {
		for m := 1; m <= 9; m++ {
			if v := at(m, k); (m == 1 || digits[m]) && v >= min*(1-1e-12) && v <= max*(1+1e-12) {
				n++
			}
		}
	}
	return n
}

func mod(a, b int) int { return ((a % b) + b) % b }
