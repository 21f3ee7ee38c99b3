package report

import (
	"bytes"
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// line returns a series of 101 points of f on [0, 1].
func line(name string, f func(float64) float64) Series {
	return FuncSeries(name, f, 0, 1, 100)
}

// canvas is the drawing area render uses for a 6 × 4 in plot.
func canvas() draw.Canvas {
	c := vgimg.NewWith(vgimg.UseWH(6*vg.Inch, 4*vg.Inch), vgimg.UseDPI(48))
	return draw.Crop(draw.New(c), vg.Points(4), -vg.Points(12), vg.Points(4), -vg.Points(6))
}

func TestLegendGoesWhereNoLineIs(t *testing.T) {
	up := line("up", func(x float64) float64 { return x })
	down := line("down", func(x float64) float64 { return 1 - x })
	low := line("low", func(x float64) float64 { return 0.1 * x })
	for _, c := range []struct {
		name   string
		spec   PlotSpec
		want   LegendPos
		render bool
	}{
		// y = x runs through the bottom-left and top-right corners.
		{"diagonal", PlotSpec{Series: []Series{up, low}}, LegendTopLeft, false},
		// y = 1 − x through the other two: the top right is free.
		{"antidiagonal", PlotSpec{Series: []Series{down, low}}, LegendTopRight, false},
		// Both diagonals: every corner is taken.
		{"cross", PlotSpec{Series: []Series{up, down}}, LegendBelow, true},
		// An explicit choice is kept, the old fields included.
		{"explicit", PlotSpec{Series: []Series{up, down}, Legend: LegendBottomRight}, LegendBottomRight, false},
		{"old fields", PlotSpec{Series: []Series{up, down}, LegendLeft: true}, LegendTopLeft, false},
		{"old fields bottom", PlotSpec{Series: []Series{up, down}, LegendLeft: true, LegendBottom: true}, LegendBottomLeft, false},
		{"none", PlotSpec{Series: []Series{up, down}, Legend: LegendNone}, LegendNone, true},
		{"unnamed", PlotSpec{Series: []Series{{X: up.X, Y: up.Y}}}, LegendNone, false},
	} {
		c.spec.DPI = 48
		fig, _, err := newFigure(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := fig.place(canvas(), c.spec); got != c.want {
			t.Errorf("%s: legend at %d, want %d", c.name, got, c.want)
		}
		if c.render {
			a, _, err := RenderPNG(c.spec)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			b, _, _ := RenderPNG(c.spec)
			if !bytes.Equal(a, b) {
				t.Errorf("%s: two renderings differ", c.name)
			}
		}
	}
}

// TestLegendBelowLeavesTheLinesVisible checks that with the legend below
// the axes both series colours appear in the bottom strip (the legend's
// thumbnails) and the plot above still shows both lines.
func TestLegendBelowLeavesTheLinesVisible(t *testing.T) {
	spec := PlotSpec{Series: []Series{line("up", func(x float64) float64 { return x }), line("down", func(x float64) float64 { return 1 - x })}, DPI: 96}
	png, _, err := RenderPNG(spec)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, png)
	h := img.Bounds().Dy()
	for i, col := range palette[:2] {
		below, above := 0, 0
		for y := 0; y < h; y++ {
			for x := 0; x < img.Bounds().Dx(); x++ {
				p := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				if abs(int(p.R)-int(col.R)) <= 6 && abs(int(p.G)-int(col.G)) <= 6 && abs(int(p.B)-int(col.B)) <= 6 {
					if y > h*9/10 {
						below++
					} else {
						above++
					}
				}
			}
		}
		if below < 10 || above < 200 {
			t.Errorf("series %d: %d pixels in the legend strip, %d in the plot", i, below, above)
		}
	}
}

// TestLogPlotHasNoGapAboveTheAxes compares the top of the data area of a
// log-y plot with that of the same plot on a linear axis: gonum/plot's own
// y label made the log one start much lower.
func TestLogPlotHasNoGapAboveTheAxes(t *testing.T) {
	s := line("decay", func(x float64) float64 { return math.Exp(-20 * x) })
	var tops []vg.Length
	for _, logY := range []bool{false, true} {
		spec := PlotSpec{Title: "t", YLabel: "a long label for the y axis", Series: []Series{s}, LogY: logY, Height: 3}
		fig, _, err := newFigure(spec)
		if err != nil {
			t.Fatal(err)
		}
		c := draw.New(vgimg.NewWith(vgimg.UseWH(6*vg.Inch, 3*vg.Inch), vgimg.UseDPI(48)))
		fig.draw(c, spec)
		dc := fig.p.DataCanvas(c)
		tops = append(tops, dc.Max.Y)
	}
	if d := tops[0] - tops[1]; d > vg.Points(8) || d < -vg.Points(8) {
		t.Errorf("data area ends at %v (linear) and %v (log)", tops[0], tops[1])
	}
}

func TestAxisLimits(t *testing.T) {
	s := sampleSpec()
	s.XLim, s.YLim = [2]float64{-1, 1}, [2]float64{math.NaN(), 5}
	fig, _, err := newFigure(s)
	if err != nil {
		t.Fatal(err)
	}
	lo := math.Inf(1) // the bottom of GELU's band, the data's lowest point
	for _, v := range s.Series[0].Lo {
		lo = math.Min(lo, v)
	}
	if fig.p.X.Min != -1 || fig.p.X.Max != 1 || fig.p.Y.Min != lo || fig.p.Y.Max != 5 {
		t.Errorf("axes [%v, %v] × [%v, %v], want [-1, 1] × [%v, 5]", fig.p.X.Min, fig.p.X.Max, fig.p.Y.Min, fig.p.Y.Max, lo)
	}
	if _, _, err := RenderPNG(s); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mod  func(*PlotSpec)
		want string
	}{
		{func(s *PlotSpec) { s.XLim = [2]float64{1, -1} }, "XLim [1 -1]"},
		{func(s *PlotSpec) { s.YLim = [2]float64{0, math.Inf(1)} }, "YLim"},
		{func(s *PlotSpec) { s.LogY, s.HLines, s.YLim = true, nil, [2]float64{0, 1} }, "above 0 on a log axis"},
		{func(s *PlotSpec) { s.Legend = LegendNone + 1 }, "legend position"},
	} {
		s := sampleSpec()
		c.mod(&s)
		if _, _, err := RenderPNG(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

func TestFuncSeries(t *testing.T) {
	s := FuncSeries("sin", math.Sin, -1, 1, 4)
	want := []float64{-1, -0.5, 0, 0.5, 1}
	for i, x := range want {
		if s.X[i] != x || s.Y[i] != math.Sin(x) {
			t.Errorf("point %d: (%v, %v), want (%v, %v)", i, s.X[i], s.Y[i], x, math.Sin(x))
		}
	}
	if s.Name != "sin" || len(s.X) != 5 {
		t.Errorf("%+v", s)
	}
}

// A point count that would size an absurd allocation, or none at all, is
// clamped; a nil function gives NaN values instead of a panic.
func TestFuncSeriesBadArguments(t *testing.T) {
	for _, c := range []struct{ n, points int }{{math.MaxInt, MaxFuncPoints + 1}, {0, 2}, {-3, 2}} {
		if s := FuncSeries("sin", math.Sin, 0, 1, c.n); len(s.X) != c.points || len(s.Y) != c.points {
			t.Errorf("n = %d: %d points, want %d", c.n, len(s.X), c.points)
		}
	}
	s := FuncSeries("nil", nil, 0, 1, 2)
	if len(s.Y) != 3 || !math.IsNaN(s.Y[0]) || !math.IsNaN(s.Y[2]) || s.X[1] != 0.5 {
		t.Errorf("nil f: X %v, Y %v; want X 0, 0.5, 1 and NaN values", s.X, s.Y)
	}
}

// A nil Option is skipped rather than called.
func TestNewSkipsNilOption(t *testing.T) {
	r, err := New(t.TempDir(), "x", nil, WithDigits(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
