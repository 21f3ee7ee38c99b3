package datasets

// Limits on what the loaders accept, and opening files safely. A corrupt
// or hostile file or argument must end in an error, not in a read that never
// ends or an allocation that exhausts memory.

import (
	"fmt"
	"math"
	"os"
)

// Limits, checked before anything of the checked size is allocated. They
// are variables so that a program with bigger data can raise them; set them
// before loading, not while another goroutine loads.
var (
	// MaxIDXBytes bounds the data an IDX file may declare (after
	// decompression): 2³⁰ bytes (1 GiB) by default, above EMNIST ByClass
	// (638 MB); 2²⁸ on 32-bit platforms. LoadIDX turns every byte into a
	// float32, so a dataset at the limit takes 4 GiB.
	MaxIDXBytes int64 = min(1<<30, math.MaxInt>>3)

	// MaxTextBytes bounds the size of a file LoadText reads: 2²⁸ bytes
	// (256 MiB) by default, above enwik8 (100 MB).
	MaxTextBytes int64 = 1 << 28

	// MaxElements bounds the number of values one array built from
	// arguments may hold: a batch tensor of NewLoader, the features of
	// Spirals, Blobs, Teacher.Sample, Subset, CharVocab.Windows and
	// CharTask, the permutation of SplitIndices, a teacher's weight matrix,
	// the counts of ClassCounts. 2³⁰ by default (4 GiB of float32); 2²⁶ on
	// 32-bit platforms, whose whole address space is 4 GiB.
	MaxElements = min(1<<30, math.MaxInt>>5)
)

// elements returns the product of counts, or an error naming what if one
// is negative, the product overflows an int or exceeds MaxElements.
func elements(what string, counts ...int) (int, error) {
	n := 1
	for _, c := range counts {
		if c < 0 {
			return 0, fmt.Errorf("%s: count %d, want ≥ 0", what, c)
		}
		if c != 0 && n > math.MaxInt/c {
			return 0, fmt.Errorf("%s: %v values overflow an int", what, product(counts))
		}
		n *= c
	}
	if n > MaxElements {
		return 0, fmt.Errorf("%s: %s = %d values, more than datasets.MaxElements = %d", what, product(counts), n, MaxElements)
	}
	return n, nil
}

// product formats counts as a product, e.g. "60000×784".
func product(counts []int) string {
	s := ""
	for i, c := range counts {
		if i > 0 {
			s += "×"
		}
		s += fmt.Sprint(c)
	}
	return s
}

// openRegular opens path for reading if it is a regular file (following
// symlinks) and returns it with its size. Anything else is refused before
// it is opened: reading a device such as /dev/zero never ends, opening a
// FIFO blocks until a writer appears. The open file is checked again, in
// case path was replaced in between.
func openRegular(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file (mode %v)", path, st.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fst, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fst.Mode().IsRegular() || !os.SameFile(st, fst) {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file (it changed while being opened)", path)
	}
	return f, fst.Size(), nil
}
