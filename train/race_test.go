//go:build race

package train_test

// raceEnabled shortens the crash test's run: the race detector slows each
// step about tenfold.
const raceEnabled = true
