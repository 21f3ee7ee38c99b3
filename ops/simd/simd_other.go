//go:build !amd64 || noasm

package simd

// Available is false: there is no assembly for this platform.
var Available = false

// Call32 is never reached when Available is false.
func Call32(id ID, dst, x, g []float32, add bool, p *[8]float64, exc *Bitmap) bool {
	panic("simd: no assembly kernels on this platform")
}

// Call64 is never reached when Available is false.
func Call64(id ID, dst, x, g []float64, add bool, p *[8]float64, exc *Bitmap) bool {
	panic("simd: no assembly kernels on this platform")
}
