//go:build !race

package gemm

const ownRaceEnabled = false
