//go:build amd64 && !noasm && amd64.v3

package activation

// With GOAMD64=v3 or later the compiler fuses a·b+c in the scalar
// reference, so the float64 assembly kernels would no longer match it bit
// for bit; float64 uses the portable loops.
const exact64 = false
