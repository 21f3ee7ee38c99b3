//go:build race

package gemm

const ownRaceEnabled = true
