//go:build amd64 && !noasm && !amd64.v3

package activation

// exact64 reports whether the float64 assembly kernels are bit-identical to
// the scalar reference: they repeat its operations one by one, which holds
// only while the compiler does not fuse a·b+c in the Go code (it does from
// GOAMD64=v3 on).
const exact64 = true
