package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleSpec() PlotSpec {
	n := 101
	x, y, lo, hi, y2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = -3 + 6*float64(i)/float64(n-1)
		y[i] = x[i] * 0.5 * math.Erfc(-x[i]/math.Sqrt2)
		lo[i], hi[i] = y[i]-0.3, y[i]+0.3
		y2[i] = math.Max(0, x[i])
	}
	return PlotSpec{
		Title: "GELU and ReLU", XLabel: "x", YLabel: "f(x)",
		Series: []Series{{Name: "GELU", X: x, Y: y, Lo: lo, Hi: hi}, {Name: "ReLU", X: x, Y: y2, Dashed: true}},
		HLines: []float64{0}, VLines: []float64{0},
		DPI: 48, // small, to keep the tests fast under -race
	}
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("output is not a PNG: %v", err)
	}
	return img
}

// countColor counts pixels within tol of c in every channel.
func countColor(img image.Image, c color.NRGBA, tol int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if abs(int(p.R)-int(c.R)) <= tol && abs(int(p.G)-int(c.G)) <= tol && abs(int(p.B)-int(c.B)) <= tol {
				n++
			}
		}
	}
	return n
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

func TestRenderPNGIsDeterministicAndDrawsEverything(t *testing.T) {
	a, notes, err := RenderPNG(sampleSpec())
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes %v for clean data", notes)
	}
	b, _, _ := RenderPNG(sampleSpec())
	if !bytes.Equal(a, b) {
		t.Fatal("two renderings of the same plot differ")
	}
	img := decode(t, a)
	if sz := img.Bounds().Size(); sz.X != 6*48 || sz.Y != 4*48 {
		t.Errorf("image is %v, want 288×192 (6×4 in at 48 dpi)", sz)
	}
	// The default size is 6 × 4 inches at 144 dpi.
	s := sampleSpec()
	s.Width, s.DPI = 0, 0
	c, _, err := RenderPNG(s)
	if err != nil {
		t.Fatal(err)
	}
	full := decode(t, c)
	if sz := full.Bounds().Size(); sz.X != 864 || sz.Y != 576 {
		t.Errorf("image is %v, want 864×576", sz)
	}
	// Both line colours and the band (tab:blue at alpha 0x40 over white)
	// must be on the canvas.
	blue, orange := palette[0], palette[1]
	band := color.NRGBA{
		uint8(255 - (255-int(blue.R))*0x40/0xff), uint8(255 - (255-int(blue.G))*0x40/0xff),
		uint8(255 - (255-int(blue.B))*0x40/0xff), 0xff,
	}
	for name, c := range map[string]color.NRGBA{"GELU line": blue, "ReLU line": orange, "band": band} {
		if n := countColor(full, c, 6); n < 200 {
			t.Errorf("%s colour %v: %d pixels, want a visible amount", name, c, n)
		}
	}
}

func TestRenderPNGSkipsUndrawablePointsWithANote(t *testing.T) {
	s := sampleSpec()
	s.Series[0].Y[10] = math.NaN()
	s.Series[0].Y[50] = math.Inf(1)
	s.Series[0].Lo[20] = math.NaN()
	_, notes, err := RenderPNG(s)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(notes, "\n")
	if len(notes) != 2 || !strings.Contains(joined, `"GELU": 2 of 101 points not drawn`) || !strings.Contains(joined, "first at x = -2.400") ||
		!strings.Contains(joined, "band not drawn at 1 of 101") {
		t.Errorf("notes %q", notes)
	}
	// On a log axis, zeros and negatives cannot be drawn.
	s = sampleSpec()
	s.HLines, s.LogY = nil, true
	_, notes, err = RenderPNG(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 3 || !strings.Contains(strings.Join(notes, "\n"), `"ReLU": 51 of 101 points not drawn (NaN, ±Inf or ≤ 0 on the log axis)`) {
		t.Errorf("log-y notes %q", notes)
	}
}

func TestRenderPNGBadInput(t *testing.T) {
	one := []float64{1, 2}
	for _, c := range []struct {
		name string
		mod  func(*PlotSpec)
		want string
	}{
		{"no series", func(s *PlotSpec) { s.Series = nil }, "no series"},
		{"length mismatch", func(s *PlotSpec) { s.Series[1].Y = s.Series[1].Y[:5] }, "101 x and 5 y values"},
		{"empty series", func(s *PlotSpec) { s.Series[1].X, s.Series[1].Y = nil, nil }, "0 x and 0 y"},
		{"band mismatch", func(s *PlotSpec) { s.Series[0].Hi = one }, "band has 101 lo and 2 hi"},
		{"half band", func(s *PlotSpec) { s.Series[0].Hi = nil }, "want both nil"},
		{"duplicate name", func(s *PlotSpec) { s.Series[1].Name = "GELU" }, `"GELU" appears twice`},
		{"unnamed", func(s *PlotSpec) { s.Series[1].Name = "" }, "no name"},
		{"NaN ref line", func(s *PlotSpec) { s.HLines = []float64{math.NaN()} }, "reference line"},
		{"log ref line at 0", func(s *PlotSpec) { s.LogY = true }, "reference line at y = 0 on a log-y plot"},
		{"all NaN", func(s *PlotSpec) {
			s.Series = s.Series[:1]
			for i := range s.Series[0].Y {
				s.Series[0].Y[i] = math.NaN()
			}
		}, "no drawable points"},
		{"dpi", func(s *PlotSpec) { s.DPI = 5000 }, "dpi"},
	} {
		s := sampleSpec()
		c.mod(&s)
		if _, _, err := RenderPNG(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestWritePlot(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.png")
	if _, err := WritePlot(p, sampleSpec()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	decode(t, b)
	if _, err := WritePlot(filepath.Join(dir, "nope", "f.png"), sampleSpec()); err == nil {
		t.Error("missing directory: no error")
	}
}
