//go:build !amd64 || noasm

package gemm

// Without assembly there is no FMA loop: the peak is unknown.
var peakLoops = map[string]peakLoop{}
