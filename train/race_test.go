//go:build race

package train_test

// raceEnabled shortens the crash test's run: the race detector slows the
// children's start-up (to ~1 s) and their steps.
const raceEnabled = true
