//go:build race

package fused

const raceEnabled = true
