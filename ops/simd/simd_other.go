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

// SGD32 reports that there is no kernel (ok false).
func SGD32(p, g, buf []float32, h *[SGDParams]float32, flags UpdateFlags) (bad int, ok bool) {
	return -1, false
}

// SGD64 reports that there is no kernel (ok false).
func SGD64(p, g, buf []float64, h *[SGDParams]float64, flags UpdateFlags) (bad int, ok bool) {
	return -1, false
}

// Adam32 reports that there is no kernel (ok false).
func Adam32(p, g, m, v, vmax []float32, h *[AdamParams]float32, flags UpdateFlags) (bad int, ok bool) {
	return -1, false
}

// Adam64 reports that there is no kernel (ok false).
func Adam64(p, g, m, v, vmax []float64, h *[AdamParams]float64, flags UpdateFlags) (bad int, ok bool) {
	return -1, false
}

// FirstNonFinite32 reports that there is no kernel (ok false).
func FirstNonFinite32(x []float32) (bad int, ok bool) { return -1, false }

// FirstNonFinite64 reports that there is no kernel (ok false).
func FirstNonFinite64(x []float64) (bad int, ok bool) { return -1, false }
