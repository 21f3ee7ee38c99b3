package report

// Legend placement. A legend drawn over the lines hides what the plot is
// for, so by default it goes into an inside corner that no line crosses,
// and below the axes, in as many columns as fit, when every corner is
// taken.

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LegendPos says where a plot's legend goes.
type LegendPos int

const (
	// LegendAuto: the first of top right, top left, bottom right and
	// bottom left that covers no drawn line, else LegendBelow.
	LegendAuto LegendPos = iota
	// The four corners inside the axes.
	LegendTopRight
	LegendTopLeft
	LegendBottomRight
	LegendBottomLeft
	// LegendBelow puts the legend under the x axis, in columns.
	LegendBelow
	// LegendNone draws no legend.
	LegendNone
)

type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// figure is a plot with what the legend placement needs: the legend's
// entries and every drawn polyline, in data coordinates.
type figure struct {
	p      *plot.Plot
	legend []legendEntry
	lines  []plotter.XYs
}

// draw draws the figure with its legend on c.
func (f *figure) draw(c draw.Canvas, spec PlotSpec) {
	// gonum/plot reserves room for the y label as if it were centred on
	// the mean of the axis range, which on a log axis is near the top, and
	// leaves empty space above the axes; the label is drawn here instead.
	label := f.p.Y.Label
	f.p.Y.Label.Text = ""
	if label.Text != "" {
		c = draw.Crop(c, label.TextStyle.Height(label.Text)+label.TextStyle.FontExtents().Descent+label.Padding, 0, 0, 0)
	}
	pc := c // the plot's canvas
	switch pos := f.place(c, spec); pos {
	case LegendNone:
	case LegendBelow:
		pc = f.drawBelow(c)
	default:
		f.p.Legend.Top = pos == LegendTopRight || pos == LegendTopLeft
		f.p.Legend.Left = pos == LegendTopLeft || pos == LegendBottomLeft
		for _, e := range f.legend {
			f.p.Legend.Add(e.name, e.thumb)
		}
	}
	f.p.Draw(pc)
	if label.Text != "" {
		sty := label.TextStyle
		sty.Rotation += math.Pi / 2
		x := pc.Min.X - label.Padding - label.TextStyle.FontExtents().Descent
		dc := f.p.DataCanvas(pc)
		c.FillText(sty, vg.Point{X: x, Y: dc.Center().Y}, label.Text)
	}
}

// place resolves spec's legend position for the plot drawn on c.
func (f *figure) place(c draw.Canvas, spec PlotSpec) LegendPos {
	pos := spec.Legend
	if pos == LegendAuto && (spec.LegendLeft || spec.LegendBottom) {
		pos = map[[2]bool]LegendPos{{true, false}: LegendTopLeft, {false, true}: LegendBottomRight, {true, true}: LegendBottomLeft}[[2]bool{spec.LegendLeft, spec.LegendBottom}]
	}
	if len(f.legend) == 0 {
		return LegendNone
	}
	if pos != LegendAuto {
		return pos
	}
	w, h := f.legendSize(f.legend)
	for _, corner := range []LegendPos{LegendTopRight, LegendTopLeft, LegendBottomRight, LegendBottomLeft} {
		if f.covered(c, corner, w, h) == 0 {
			return corner
		}
	}
	return LegendBelow
}

// legendSize is the extent of a one-column legend of entries.
func (f *figure) legendSize(entries []legendEntry) (w, h vg.Length) {
	l := f.p.Legend
	var eh vg.Length
	for _, e := range entries {
		w = max(w, l.ThumbnailWidth+l.TextStyle.Rectangle(" "+e.name).Max.X)
		eh = max(eh, l.TextStyle.Rectangle(e.name).Max.Y)
	}
	if n := vg.Length(len(entries)); n > 0 {
		h = n*eh + (n-1)*l.Padding
	}
	return w, h
}

// covered counts the line segments that a w × h legend in the given
// corner of the data area would cover (with a small margin).
func (f *figure) covered(c draw.Canvas, corner LegendPos, w, h vg.Length) int {
	dc := f.p.DataCanvas(c)
	m := vg.Points(3)
	r := dc.Rectangle
	if corner == LegendTopRight || corner == LegendBottomRight {
		r.Min.X = r.Max.X - w - m
	} else {
		r.Max.X = r.Min.X + w + m
	}
	if corner == LegendTopRight || corner == LegendTopLeft {
		r.Min.Y = r.Max.Y - h - m
	} else {
		r.Max.Y = r.Min.Y + h + m
	}
	tx, ty := f.p.Transforms(&dc)
	n := 0
	for _, xy := range f.lines {
		for i := range xy {
			j := max(i-1, 0) // a single point is a segment of length 0
			if segmentHits(float64(tx(xy[j].X)), float64(ty(xy[j].Y)), float64(tx(xy[i].X)), float64(ty(xy[i].Y)), r) {
				n++
			}
		}
	}
	return n
}

// segmentHits reports whether the segment (x0, y0)–(x1, y1) meets r
// (Liang–Barsky clipping).
func segmentHits(x0, y0, x1, y1 float64, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := x1-x0, y1-y0
	for _, pq := range [4][2]float64{
		{-dx, x0 - float64(r.Min.X)}, {dx, float64(r.Max.X) - x0},
		{-dy, y0 - float64(r.Min.Y)}, {dy, float64(r.Max.Y) - y0},
	} {
		p, q := pq[0], pq[1]
		switch {
		case p == 0:
			if q < 0 {
				return false
			}
		case p < 0:
			t0 = max(t0, q/p)
		default:
			t1 = min(t1, q/p)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}

// drawBelow draws the legend in columns under the x axis and returns the
// canvas left for the plot.
func (f *figure) drawBelow(c draw.Canvas) draw.Canvas {
	l := f.p.Legend
	w, _ := f.legendSize(f.legend)
	colW := w + 2*l.TextStyle.Rectangle(" ").Max.X
	dc := f.p.DataCanvas(c)
	cols := max(1, min(len(f.legend), int(dc.Size().X/colW)))
	rows := (len(f.legend) + cols - 1) / cols
	_, h := f.legendSize(f.legend[:rows])
	gap := vg.Points(6)
	for col := 0; col*rows < len(f.legend); col++ {
		cl := plot.NewLegend()
		cl.TextStyle, cl.ThumbnailWidth, cl.Padding = l.TextStyle, l.ThumbnailWidth, l.Padding
		cl.Top, cl.Left = true, true
		for _, e := range f.legend[col*rows : min(len(f.legend), (col+1)*rows)] {
			cl.Add(e.name, e.thumb)
		}
		x := dc.Min.X + vg.Length(col)*colW
		cl.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x, Y: c.Min.Y}, Max: vg.Point{X: x + colW, Y: c.Min.Y + h}}})
	}
	return draw.Crop(c, 0, 0, h+gap, 0)
}
