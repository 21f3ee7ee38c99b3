//go:build !amd64 || noasm

package simd

// Available is false: there is no assembly for this platform.
var Available = false

// Current is always Generic here.
var Current = Generic

// Paths lists the one path there is.
func Paths() []Path { return []Path{Generic} }

// Use does nothing: there is only the generic path.
func Use(p Path) Path { return Generic }

// Call32 is never reached when Available is false.
func Call32(id ID, dst, x, g []float32, add bool, p *[8]float64, exc *Bitmap) bool {
	panic("simd: no assembly kernels on this platform")
}

// Call64 is never reached when Available is false.
func Call64(id ID, dst, x, g []float64, add bool, p *[8]float64, exc *Bitmap) bool {
	panic("simd: no assembly kernels on this platform")
}
