//go:build !amd64 || noasm

package gemm

// Without assembly the portable Go micro-kernel is the only path.
var ownPaths = []*ownPath{&ownGenericPath}
