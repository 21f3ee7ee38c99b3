// Package extest holds the checks every example program's test makes of
// its output folder: that two runs of one configuration wrote the same
// bytes (SameFiles), and that the folder has the files, a report.md that
// starts with the command, and only documented summary keys (CheckOutput).
//
//	func TestRun(t *testing.T) {
//		a, b := t.TempDir(), t.TempDir()
//		run(small(a)); run(small(b))
//		extest.SameFiles(t, a, b, "timing.csv")
//		sum := extest.CheckOutput(t, a, "prog -steps 20", "curves.csv", "loss.png")
//		v, ok := sum.Number("gelu.final_loss")
//		...
//	}
package extest
