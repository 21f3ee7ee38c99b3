//go:build !race

package optim_test

const raceEnabled = false
