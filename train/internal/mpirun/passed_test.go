package mpirun

import (
	"strings"
	"testing"
	"time"

	"github.com/geluproject/gelu/train/dist"
)

// passed on -test.v output of 2 ranks, written here by hand: the ranks'
// lines interleave, and subtests and other tests do not count.
func TestPassed(t *testing.T) {
	const (
		pass = "=== RUN   TestRankA\n=== RUN   TestRankA\n=== RUN   TestRankA/sub\n" +
			"--- PASS: TestRankA (0.01s)\n    --- PASS: TestRankA/sub (0.00s)\n--- PASS: TestRankA (0.02s)\n" +
			"=== RUN   TestRankAB\n--- PASS: TestRankAB (0.00s)\n=== RUN   TestRankAB\n--- PASS: TestRankAB (0.00s)\n" +
			"=== RUN   TestOther\n--- SKIP: TestOther (0.00s)\nPASS\nPASS\n"
		skipped = "=== RUN   TestRankA\n=== RUN   TestRankA\n--- PASS: TestRankA (0.01s)\n" +
			"--- SKIP: TestRankA (0.00s)\n    x_test.go:9: skipped\nPASS\nPASS\n"
		oneRank = "=== RUN   TestRankA\n--- PASS: TestRankA (0.01s)\nPASS\n"
		none    = "testing: warning: no tests to run\nPASS\nPASS\n"
	)
	for _, c := range []struct {
		name, out string
		runs      int
		err       string
	}{
		{"pass", pass, 4, ""},
		{"skipped", skipped, 0, "mpirun -np 2: TestRankA passed on 1 ranks, want 2"},
		{"one rank", oneRank, 0, "mpirun -np 2: TestRankA passed on 1 ranks, want 2"},
		{"none", none, 0, "mpirun -np 2 ran no TestRank test"},
	} {
		runs, err := passed(c.out, 2)
		if runs != c.runs || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%s: passed gives %d, %v; want %d, %q", c.name, runs, err, c.runs, c.err)
		}
	}
}

// A rank test that skips or fails on one rank of a real job is noticed.
func TestRunRankNotPassed(t *testing.T) {
	for _, mode := range []string{"skip", "fail"} {
		t.Run(mode, func(t *testing.T) {
			j := Run(t, dist.Launcher, 2, "^TestRankJob$", time.Minute, "GELU_MPIRUN_TEST="+mode)
			if (j.Err != nil) != (mode == "fail") {
				t.Fatalf("the job ended with %v\n%s", j.Err, j.Out)
			}
			// A failed rank ends the job, so rank 0 may not get to
			// report its pass.
			want := "mpirun -np 2: TestRankJob passed on 1 ranks, want 2"
			_, err := passed(j.Out, 2)
			if err == nil || (mode == "skip" && err.Error() != want) || !strings.Contains(j.Out, "rank 1 "+mode+"s on purpose") {
				t.Fatalf("a job whose rank 1 %ss: %v, want %q\n%s", mode, err, want, j.Out)
			}
		})
	}
}
