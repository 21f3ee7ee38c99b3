package dist

import "fmt"

// Shard returns the rows [lo, hi) of a global batch of n examples that
// rank takes among size ranks: contiguous, in rank order, the first
// n mod size ranks one row more than the others.
//
// With n = size·B every rank takes B rows, and the ranks' shares laid end
// to end are the global batch: N ranks with local batch B see exactly the
// examples one process sees with batch N·B, from the same seeded order
// (the single process's loader at batch N·B, whose batch i each rank cuts).
// Contiguous shares also make rank r's rows the r-th micro-batch of one
// process that accumulates gradients over N micro-batches of B, the
// process the deterministic Reducer is bit-identical to.
//
// When size does not divide n (n = 64 over 3 ranks: 22, 21, 21 rows) the
// ranks' local batches differ by one row; each rank passes its own count
// to Reducer.SetShare so that the step is still the mean over the n
// examples, and the rank with the extra row sets the pace. A rank may get
// no rows (n < size); it then contributes nothing (share 0).
func Shard(n, rank, size int) (lo, hi int, err error) {
	if size < 1 || rank < 0 || rank >= size || n < 0 {
		return 0, 0, fmt.Errorf("dist.Shard(%d, %d, %d): want n ≥ 0, size ≥ 1 and 0 ≤ rank < size", n, rank, size)
	}
	q, extra := n/size, n%size
	lo = rank*q + min(rank, extra)
	hi = lo + q
	if rank < extra {
		hi++
	}
	return lo, hi, nil
}
