//go:build race

package datasets_test

// raceEnabled skips decoding the full MNIST files: the race detector slows
// gzip and the per-pixel checks about 30-fold (80 s instead of 3 s), and
// the code they exercise has no concurrency. TestMNISTFromDirectory covers
// the same path on small files.
const raceEnabled = true
