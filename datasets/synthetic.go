package datasets

// Seeded synthetic classification sets for fast tests and controlled
// experiments.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph/rng"
)

// SpiralsConfig configures Spirals.
type SpiralsConfig struct {
	PerClass int     // points per arm
	Classes  int     // number of arms; 0 means 2
	Turns    float64 // revolutions of each arm; 0 means 1
	Noise    float64 // standard deviation of the Gaussian noise on each coordinate
	Seed     uint64
}

// Spirals returns interleaved spiral arms in the plane, one class per arm.
// Point i of arm c (example c·PerClass+i) is
//
//	t = (i + ½)/PerClass,  θ = 2π·Turns·t + 2π·c/Classes,
//	(t·cos θ, t·sin θ) + Noise·(z₁, z₂),  z ~ N(0, I),
//
// so the arms start near the origin and end on the unit circle, rotated
// copies of each other. The noise comes from rng.New(Seed, "spirals.noise").
func Spirals(cfg SpiralsConfig) (*Dataset, error) {
	if cfg.Classes == 0 {
		cfg.Classes = 2
	}
	if cfg.Turns == 0 {
		cfg.Turns = 1
	}
	if cfg.PerClass <= 0 || cfg.Classes < 1 || !(cfg.Noise >= 0) || math.IsInf(cfg.Noise, 0) ||
		math.IsNaN(cfg.Turns) || math.IsInf(cfg.Turns, 0) {
		return nil, fmt.Errorf("datasets.Spirals: %d points per class, %d classes, %v turns, noise %v; want positive counts, finite turns and finite noise ≥ 0",
			cfg.PerClass, cfg.Classes, cfg.Turns, cfg.Noise)
	}
	if _, err := elements("datasets.Spirals", cfg.PerClass, cfg.Classes, 2); err != nil {
		return nil, err
	}
	r := rng.New(cfg.Seed, "spirals.noise")
	n := cfg.PerClass * cfg.Classes
	d := &Dataset{Name: "spirals", Features: 2, X: make([]float32, 0, 2*n), Labels: make([]int, 0, n), Classes: cfg.Classes}
	for c := range cfg.Classes {
		for i := range cfg.PerClass {
			t := (float64(i) + 0.5) / float64(cfg.PerClass)
			th := 2*math.Pi*cfg.Turns*t + 2*math.Pi*float64(c)/float64(cfg.Classes)
			x := t*math.Cos(th) + cfg.Noise*r.Normal()
			y := t*math.Sin(th) + cfg.Noise*r.Normal()
			d.X = append(d.X, float32(x), float32(y))
			d.Labels = append(d.Labels, c)
		}
	}
	return d, nil
}

// BlobsConfig configures Blobs (sklearn's make_blobs).
type BlobsConfig struct {
	PerClass  int
	Classes   int
	Features  int
	Std       float64 // standard deviation of every cluster in every direction; 0 means 1
	CenterBox float64 // centers are uniform in [−CenterBox, CenterBox]^Features; 0 means 10
	Seed      uint64
}

// Blobs returns isotropic Gaussian clusters, one per class: example
// c·PerClass+i is centers[c] + Std·z with z ~ N(0, I). The centers are drawn
// from rng.New(Seed, "blobs.centers") and returned with the data; the
// points come from the stream "blobs.points".
func Blobs(cfg BlobsConfig) (*Dataset, [][]float64, error) {
	if cfg.Std == 0 {
		cfg.Std = 1
	}
	if cfg.CenterBox == 0 {
		cfg.CenterBox = 10
	}
	if cfg.PerClass <= 0 || cfg.Classes <= 0 || cfg.Features <= 0 {
		return nil, nil, fmt.Errorf("datasets.Blobs: %d per class, %d classes, %d features; want all > 0", cfg.PerClass, cfg.Classes, cfg.Features)
	}
	if !(cfg.Std > 0) || math.IsInf(cfg.Std, 0) || !(cfg.CenterBox > 0) || math.IsInf(cfg.CenterBox, 0) {
		return nil, nil, fmt.Errorf("datasets.Blobs: std %v and center box %v, want both finite and > 0", cfg.Std, cfg.CenterBox)
	}
	// The centers (Classes×Features) are no larger than the data.
	if _, err := elements("datasets.Blobs", cfg.PerClass, cfg.Classes, cfg.Features); err != nil {
		return nil, nil, err
	}
	rc := rng.New(cfg.Seed, "blobs.centers")
	centers := make([][]float64, cfg.Classes)
	for c := range centers {
		centers[c] = make([]float64, cfg.Features)
		for j := range centers[c] {
			centers[c][j] = rc.Uniform(-cfg.CenterBox, cfg.CenterBox)
		}
	}
	rp := rng.New(cfg.Seed, "blobs.points")
	n := cfg.PerClass * cfg.Classes
	d := &Dataset{Name: "blobs", Features: cfg.Features, X: make([]float32, 0, n*cfg.Features), Labels: make([]int, 0, n), Classes: cfg.Classes}
	for c, mu := range centers {
		for range cfg.PerClass {
			for _, m := range mu {
				d.X = append(d.X, float32(m+cfg.Std*rp.Normal()))
			}
			d.Labels = append(d.Labels, c)
		}
	}
	return d, centers, nil
}
