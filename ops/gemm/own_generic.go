//go:build !amd64 || noasm

package gemm

// Without assembly the portable Go micro-kernel is the only path.
var ownPaths = []*ownPath{&ownGenericPath}

// ownTrans16S is the assembly transposition's contract in Go; no path
// without assembly sets trans16, so it is never called.
func ownTrans16S(dst *float32, w int, src *float32, lds, blocks int) {
	d := ownUnsafeSlice(dst, (16*blocks-1)*w+16)
	s := ownUnsafeSlice(src, 15*lds+16*blocks)
	for j := range 16 {
		for p := range 16 * blocks {
			d[p*w+j] = s[j*lds+p]
		}
	}
}
