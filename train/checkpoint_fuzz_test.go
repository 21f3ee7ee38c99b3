package train

import (
	"math"
	"runtime"
	"testing"
)

// FuzzResumeMetadata feeds arbitrary checkpoint metadata and run shapes to
// parseResume. It must never panic, allocate little more than the input
// (error messages quote it), and whatever it accepts must satisfy the
// documented invariants, so that a resumed run starts at a real position
// of this run.
func FuzzResumeMetadata(f *testing.F) {
	f.Add("4", "0", "4", "1", "0.5", "0.05", "3", "11", 6, 2, 0)
	f.Add("1000000", "0", "1000000", "0", "0", "0.05", "1000000", "11", 6, 2, 0)
	f.Add("6000004", "1000000", "4", "1", "1e999", "-1", "", "11", 6, 2, 3)
	f.Add("12", "2", "0", "0", "0", "NaN", "12", "11", 6, 2, 12)
	f.Fuzz(func(t *testing.T, step, epoch, batch, lossCount, lossSum, lr, lastEval, seed string, nb, epochs, maxSteps int) {
		meta := map[string]string{"format": checkpointFormat, "step": step, "epoch": epoch, "batch": batch,
			"loss_count": lossCount, "loss_sum": lossSum, "lr": lr, "seed": seed}
		if lastEval != "" {
			meta["last_eval"] = lastEval
		}
		run := runShape{seed: 11, batchesPerEpoch: nb, epochs: epochs, maxSteps: maxSteps}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s, err := parseResume(meta, run)
		runtime.ReadMemStats(&after)
		n := len(step) + len(epoch) + len(batch) + len(lossCount) + len(lossSum) + len(lr) + len(lastEval) + len(seed)
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10+16*uint64(n) {
			t.Fatalf("parsing %d bytes of metadata allocated %d bytes", n, got)
		}
		if err != nil {
			return
		}
		ok := nb > 0 && s.epoch >= 0 && s.epoch <= epochs && s.batch >= 0 && s.batch <= nb &&
			!(s.epoch == epochs && s.batch != 0) && (s.step-s.batch)%nb == 0 && (s.step-s.batch)/nb == s.epoch &&
			(maxSteps <= 0 || s.step <= maxSteps) &&
			s.lossCount >= 0 && s.lossCount <= s.step && !math.IsNaN(s.lossSum) && !math.IsInf(s.lossSum, 0) &&
			s.lr >= 0 && !math.IsInf(s.lr, 0) && s.lastEval >= -1 && s.lastEval <= s.step
		if !ok {
			t.Fatalf("accepted %v for %+v as %+v", meta, run, s)
		}
	})
}
