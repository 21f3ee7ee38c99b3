// Package extest holds the checks every example program's test makes of
// its output folder: that two runs of one configuration wrote the same
// bytes (SameFiles, RunTwice), and that the folder has the files, a
// report.md that starts with the command, and only documented summary keys
// (CheckOutput); and the loop their training-step benchmarks time
// (BenchSteps). An example program's test, with a small program of its
// own standing in for the example's run (TestExampleProgram):
//
//	program := func(dir string, workers int) (float64, error) { // an example program's run
//		r, err := report.New(dir, "Squares", report.WithCommand("squares", "-n", "10"))
//		if err != nil {
//			return 0, err
//		}
//		sum := 0.0
//		for i := 1; i <= 10; i++ {
//			sum += float64(i * i)
//		}
//		r.Describe("sum", "1² + 2² + … + 10²")
//		r.Set("sum", sum)
//		timing := fmt.Sprintf("workers,%d\n", workers) // a real program's wall times: they differ between runs
//		return sum, errors.Join(r.Close(), os.WriteFile(filepath.Join(dir, "timing.csv"), []byte(timing), 0o644))
//	}
//	res, dir := extest.RunTwice(t, func(dir string, first bool) (float64, error) {
//		return program(dir, extest.Workers(first)) // 1, then 2 workers: must not change a byte
//	}, "timing.csv")
//	sum := extest.CheckOutput(t, dir, "squares -n 10", "timing.csv")
//	if v, ok := sum.Number("sum"); !ok || v != 385 || res != 385 {
//		t.Errorf("summary sum = %v (found: %v), result %v; want 385 (n(n+1)(2n+1)/6)", v, ok, res)
//	}
package extest
