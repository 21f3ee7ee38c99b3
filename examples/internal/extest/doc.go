// Package extest holds the checks every example program's test makes of
// its output folder: that two runs of one configuration wrote the same
// bytes (SameFiles, RunTwice), and that the folder has the files, a
// report.md that starts with the command, and only documented summary keys
// (CheckOutput); and the loop their training-step benchmarks time
// (BenchSteps).
//
//	func TestRun(t *testing.T) {
//		res, dir := extest.RunTwice(t, func(dir string, first bool) (*results, error) {
//			c := small(dir)
//			if !first {
//				c.Workers = 2 // must not change a byte
//			}
//			return run(c)
//		}, "timing.csv")
//		sum := extest.CheckOutput(t, dir, "prog -steps 20", "curves.csv", "loss.png")
//		v, ok := sum.Number("gelu.final_loss")
//		...
//	}
package extest
