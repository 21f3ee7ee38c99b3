package experiment

import "github.com/geluproject/gelu/datasets"

// MNISTSubsets returns MNIST(dir) cut to the -train-n and -test-n
// subsets (Flags.Subsets).
func (f *Flags) MNISTSubsets(dir string) (train, test *datasets.Dataset, err error) {
	train, test, err = MNIST(dir)
	if err != nil {
		return nil, nil, err
	}
	return f.Subsets(train, test)
}
