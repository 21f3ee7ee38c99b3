package experiment

import (
	"fmt"

	"github.com/geluproject/gelu/datasets"
)

// MNISTSubsets returns MNIST(dir) cut to the -train-n and -test-n
// subsets (Flags.Subsets).
func (f *Flags) MNISTSubsets(dir string) (train, test *datasets.Dataset, err error) {
	train, test, err = MNIST(dir)
	if err != nil {
		return nil, nil, err
	}
	return f.Subsets(train, test)
}

// First returns the first n examples of d.
func First(d *datasets.Dataset, n int) (*datasets.Dataset, error) {
	if n < 0 || n > d.Len() {
		return nil, fmt.Errorf("the first %d examples, but the set has %d", n, d.Len())
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return d.Subset(idx)
}
