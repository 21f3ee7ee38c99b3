//go:build !race

package datasets_test

const raceEnabled = false
