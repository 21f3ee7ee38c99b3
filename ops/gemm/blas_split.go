package gemm

// How OpenBLAS's large products are split over ops/parallel's workers
// (blas_openblas_threads.go), a rule of its own so that a report can say
// on how many threads a product ran (OpenBLASThreadsFor) wherever it is
// built.

// obMinWorkPerPart is the fewest multiply-adds a part of a split product
// gets: the own GEMM's (own_amd64.go), below which one thread beat two.
var obMinWorkPerPart = 1 << 23

// obRows is the granularity of the parts' bounds, in rows of C. A product
// is split by rows of C only, which are the columns of OpenBLAS's
// column-major view (C is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ): there, a column
// of C is the same computation whichever part it is in as long as the
// parts start at a multiple of the micro-kernel's column count, so that no
// column moves between a full and an edge tile. For OpenBLAS 0.3.21's
// Haswell kernels the bounds that keep the results identical are the
// multiples of 12 (sgemm) and of 2 (dgemm); 24 is a multiple of both and
// of 4 and 8, and TestOpenBLASSplitBitIdentical checks the OpenBLAS at
// hand. Split into rows of its own view instead, OpenBLAS's results change
// with the bounds in ways no alignment avoided (its blocking of that
// dimension depends on its size).
const obRows = 24

// obParts is how many parts an m×n×k product is split into on threads
// threads: no more than whole tiles of rows of C and the minimum work per
// part allow.
func obParts(threads, m, n, k int) int {
	work := float64(m) * float64(n) * float64(k)
	return max(1, min(threads, int(work/float64(obMinWorkPerPart)), m/obRows))
}

// OpenBLASThreadsFor is how many threads OpenBLAS runs a product C =
// op(A)·op(B) (op(A) m×k, op(B) k×n) on when this package splits its
// products over threads workers (OpenBLAS on one thread each, the
// default): 1 for a product too small to be worth a second thread. With
// OpenBLAS on threads of its own (OPENBLAS_NUM_THREADS set), OpenBLAS
// decides.
func OpenBLASThreadsFor(threads, m, n, k int) int { return obParts(threads, m, n, k) }
