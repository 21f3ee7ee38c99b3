package experiment

import (
	"fmt"
	"io"
	"time"
)

// Stopwatch starts timing a job of several stages and returns the function
// to call as each stage ends: it writes a line to w with the job, the
// stage and the seconds since Stopwatch was called,
//
//	gelu       train                done at   12s
//
// for the progress of measurements that are not Grid runs (Grid.Progress
// reports those). A nil w writes nothing: a quiet program passes nil.
func Stopwatch(w io.Writer, job string) func(stage string) {
	start := time.Now()
	return func(stage string) {
		if w != nil {
			fmt.Fprintf(w, "%-10s %-20s done at %4.0fs\n", job, stage, time.Since(start).Seconds())
		}
	}
}
