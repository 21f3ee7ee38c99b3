package report

// Line plots as PNG with gonum.org/v1/plot: one colour per series, a
// legend, optional log-y axis, optional shaded band per series (min–max or
// quartiles across seeds, see Quantiles), reference lines. Points that
// cannot be drawn (NaN, ±Inf, or ≤ 0 on a log axis) break the line and are
// reported in notes rather than failing the whole figure.

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one line of a plot.
type Series struct {
	Name string    // legend entry; required when a plot has several series
	X, Y []float64 // same length
	// Lo and Hi, if set (same length as X), bound a shaded band drawn
	// under the line, e.g. the min–max or the quartiles across seeds.
	Lo, Hi []float64
	Dashed bool // draw the line dashed (e.g. an approximation)
}

// PlotSpec describes a line plot.
type PlotSpec struct {
	Title, XLabel, YLabel string
	Series                []Series
	LogY                  bool      // logarithmic y axis; values ≤ 0 are not drawn
	HLines, VLines        []float64 // thin grey reference lines, e.g. y = 0
	// XLim and YLim fix the axis ranges (matplotlib's xlim, ylim); the
	// zero value, or NaN at either end, leaves that end to the data.
	// Lines leaving the range are clipped.
	XLim, YLim [2]float64
	// Width and Height in inches (default 6 × 4) and resolution in dots per
	// inch (default 144).
	Width, Height float64
	DPI           int
	// Legend places the legend; the default, LegendAuto, takes the inside
	// corner that covers no line, or the space below the axes if every
	// corner would. LegendLeft and LegendBottom are the older way to pick
	// a corner, still honoured when Legend is LegendAuto.
	Legend       LegendPos
	LegendLeft   bool // put the legend on the left (default right)
	LegendBottom bool // put the legend at the bottom (default top)
	Caption      string
}

// MaxFuncPoints bounds the number of intervals FuncSeries samples.
const MaxFuncPoints = 1 << 20

// FuncSeries samples f at n+1 evenly spaced points lo + (hi−lo)·i/n,
// i = 0..n, for a Series: FuncSeries("GELU", activation.GELU.F, -4, 4, 800).
// n is clamped to [1, MaxFuncPoints] (it sizes the allocation); a nil f
// gives NaN values, which a plot reports as undrawable.
func FuncSeries(name string, f func(float64) float64, lo, hi float64, n int) Series {
	n = min(max(n, 1), MaxFuncPoints)
	s := Series{Name: name, X: make([]float64, n+1), Y: make([]float64, n+1)}
	for i := range s.X {
		s.X[i] = lo + (hi-lo)*float64(i)/float64(n)
		s.Y[i] = math.NaN()
		if f != nil {
			s.Y[i] = f(s.X[i])
		}
	}
	return s
}

// palette is matplotlib's tab10, which stays distinguishable for the
// common kinds of colour blindness better than most 10-colour sets.
var palette = []color.NRGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
	{0x17, 0xbe, 0xcf, 0xff},
}

// WritePlot renders spec as a PNG at path (atomically). notes describe
// points that were not drawn; err reports bad input (no series, mismatched
// lengths, duplicate names, nothing drawable) or a failure to write.
func WritePlot(path string, spec PlotSpec) (notes []string, err error) {
	png, notes, err := RenderPNG(spec)
	if err != nil {
		return nil, fmt.Errorf("report: plot %s: %w", path, err)
	}
	return notes, WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(png); return err })
}

// RenderPNG renders spec to PNG bytes; see WritePlot.
func RenderPNG(spec PlotSpec) (png []byte, notes []string, err error) {
	fig, notes, err := newFigure(spec)
	if err != nil {
		return nil, notes, err
	}
	png, err = fig.render(spec)
	return png, notes, err
}

// newFigure builds the plot of spec.
func newFigure(spec PlotSpec) (fig *figure, notes []string, err error) {
	if err := checkSpec(spec); err != nil {
		return nil, nil, err
	}
	p := plot.New()
	p.Title.Text = spec.Title
	p.X.Label.Text = spec.XLabel
	p.Y.Label.Text = spec.YLabel
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = linTicks{}, linTicks{}
	if spec.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	fig = &figure{p: p}
	drawable := func(x, y float64) bool {
		return finite(x) && finite(y) && (!spec.LogY || y > 0)
	}
	drawn := 0
	for i, s := range spec.Series {
		col := palette[i%len(palette)]
		style := draw.LineStyle{Color: col, Width: vg.Points(1.5)}
		if s.Dashed || i >= len(palette) {
			style.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		if s.Lo != nil {
			band := color.NRGBA{col.R, col.G, col.B, 0x40}
			for _, r := range runs(len(s.X), func(j int) bool { return drawable(s.X[j], s.Lo[j]) && drawable(s.X[j], s.Hi[j]) }) {
				poly := make(plotter.XYs, 0, 2*(r[1]-r[0]))
				for j := r[0]; j < r[1]; j++ {
					poly = append(poly, plotter.XY{X: s.X[j], Y: s.Lo[j]})
				}
				for j := r[1] - 1; j >= r[0]; j-- {
					poly = append(poly, plotter.XY{X: s.X[j], Y: s.Hi[j]})
				}
				pg, err := plotter.NewPolygon(poly)
				if err != nil {
					return nil, nil, fmt.Errorf("series %q band: %w", s.Name, err)
				}
				pg.Color, pg.LineStyle.Width = band, 0
				p.Add(pg)
				fig.lines = append(fig.lines, poly)
			}
			if n := countNot(len(s.X), func(j int) bool { return drawable(s.X[j], s.Lo[j]) && drawable(s.X[j], s.Hi[j]) }); n > 0 {
				notes = append(notes, fmt.Sprintf("series %q: band not drawn at %d of %d points (%s)", s.Name, n, len(s.X), why(spec.LogY)))
			}
		}
		ok := func(j int) bool { return drawable(s.X[j], s.Y[j]) }
		var thumb plot.Thumbnailer
		for _, r := range runs(len(s.X), ok) {
			xy := make(plotter.XYs, r[1]-r[0])
			for j := range xy {
				xy[j] = plotter.XY{X: s.X[r[0]+j], Y: s.Y[r[0]+j]}
			}
			l, sc, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.LineStyle = style
			if len(xy) == 1 { // an isolated point has no line to show it
				sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
				p.Add(sc)
			}
			p.Add(l)
			fig.lines = append(fig.lines, xy)
			if thumb == nil {
				thumb = l
			}
			drawn += len(xy)
		}
		if n := countNot(len(s.X), ok); n > 0 {
			first := 0
			for ok(first) {
				first++
			}
			notes = append(notes, fmt.Sprintf("series %q: %d of %d points not drawn (%s), the first at x = %s",
				s.Name, n, len(s.X), why(spec.LogY), Format(s.X[first])))
		}
		if thumb != nil && s.Name != "" {
			fig.legend = append(fig.legend, legendEntry{s.Name, thumb})
		}
	}
	if drawn == 0 {
		return nil, notes, fmt.Errorf("no drawable points (%s)", why(spec.LogY))
	}
	setLimits(&p.X, spec.XLim)
	setLimits(&p.Y, spec.YLim)
	for _, y := range spec.HLines {
		if err := refLine(p, spec.LogY, p.X.Min, y, p.X.Max, y); err != nil {
			return nil, notes, err
		}
	}
	for _, x := range spec.VLines {
		if err := refLine(p, spec.LogY, x, p.Y.Min, x, p.Y.Max); err != nil {
			return nil, notes, err
		}
	}
	return fig, notes, nil
}

func checkSpec(spec PlotSpec) error {
	if len(spec.Series) == 0 {
		return fmt.Errorf("no series")
	}
	names := map[string]bool{}
	for i, s := range spec.Series {
		if len(s.X) == 0 || len(s.X) != len(s.Y) {
			return fmt.Errorf("series %d %q has %d x and %d y values, want the same positive number", i, s.Name, len(s.X), len(s.Y))
		}
		if (s.Lo == nil) != (s.Hi == nil) || (s.Lo != nil && (len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X))) {
			return fmt.Errorf("series %d %q: band has %d lo and %d hi values, want both nil or %d each", i, s.Name, len(s.Lo), len(s.Hi), len(s.X))
		}
		if len(spec.Series) > 1 && s.Name == "" {
			return fmt.Errorf("series %d has no name; a plot with several series needs a legend entry for each", i)
		}
		if names[s.Name] && s.Name != "" {
			return fmt.Errorf("series name %q appears twice", s.Name)
		}
		names[s.Name] = true
	}
	for _, v := range append(append([]float64(nil), spec.HLines...), spec.VLines...) {
		if !finite(v) {
			return fmt.Errorf("reference line at %v, want a finite value", v)
		}
	}
	for i, lim := range [][2]float64{spec.XLim, spec.YLim} {
		lo, hi, logAxis := lim[0], lim[1], i == 1 && spec.LogY
		if lim != [2]float64{} && (math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo >= hi || (logAxis && (lo <= 0 || hi <= 0))) {
			return fmt.Errorf("%s %v, want finite ends with lo < hi (NaN: from the data), above 0 on a log axis", []string{"XLim", "YLim"}[i], lim)
		}
	}
	if spec.Legend < LegendAuto || spec.Legend > LegendNone {
		return fmt.Errorf("legend position %d, want one of the Legend constants", spec.Legend)
	}
	if spec.Width < 0 || spec.Height < 0 || spec.DPI < 0 || spec.DPI > 1200 {
		return fmt.Errorf("size %v × %v in at %d dpi, want positive values (0 for the default) and at most 1200 dpi", spec.Width, spec.Height, spec.DPI)
	}
	return nil
}

// refLine draws a thin grey line from (x0, y0) to (x1, y1).
func refLine(p *plot.Plot, logY bool, x0, y0, x1, y1 float64) error {
	if logY && (y0 <= 0 || y1 <= 0) {
		return fmt.Errorf("reference line at y = %v on a log-y plot", math.Min(y0, y1))
	}
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y1}})
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: color.Gray{0x90}, Width: vg.Points(0.75)}
	p.Add(l)
	return nil
}

// setLimits fixes the ends of an axis's range that lim gives (NaN: keep
// the data's).
func setLimits(a *plot.Axis, lim [2]float64) {
	if lim == [2]float64{} {
		return
	}
	if !math.IsNaN(lim[0]) {
		a.Min = lim[0]
	}
	if !math.IsNaN(lim[1]) {
		a.Max = lim[1]
	}
}

// render draws the figure; gonum/plot panics on some degenerate input (a
// log axis over an empty range, for one), which becomes an error here.
func (f *figure) render(spec PlotSpec) (png []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			png, err = nil, fmt.Errorf("drawing failed: %v", r)
		}
	}()
	w, h, dpi := spec.Width, spec.Height, spec.DPI
	if w == 0 {
		w = 6
	}
	if h == 0 {
		h = 4
	}
	if dpi == 0 {
		dpi = 144
	}
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch), vgimg.UseDPI(dpi))
	// A small margin keeps the last tick label from touching the edge.
	f.draw(draw.Crop(draw.New(c), vg.Points(4), -vg.Points(12), vg.Points(4), -vg.Points(6)), spec)
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// runs returns the maximal index ranges [lo, hi) of 0..n−1 where ok holds.
func runs(n int, ok func(int) bool) [][2]int {
	var out [][2]int
	for i := 0; i < n; {
		if !ok(i) {
			i++
			continue
		}
		j := i
		for j < n && ok(j) {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

func countNot(n int, ok func(int) bool) int {
	c := 0
	for i := 0; i < n; i++ {
		if !ok(i) {
			c++
		}
	}
	return c
}

func why(logY bool) string {
	if logY {
		return "NaN, ±Inf or ≤ 0 on the log axis"
	}
	return "NaN or ±Inf"
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
