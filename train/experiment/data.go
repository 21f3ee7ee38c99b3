package experiment

import (
	"sync"

	"github.com/geluproject/gelu/datasets"
)

var mnist struct {
	sync.Mutex
	train, test map[string]*datasets.Dataset
}

// MNIST returns datasets.MNIST(dir), decoded once per process: a program
// or test that runs several experiments shares one copy, which it must
// not modify (Subset and Split make copies).
func MNIST(dir string) (train, test *datasets.Dataset, err error) {
	mnist.Lock()
	defer mnist.Unlock()
	if mnist.train[dir] == nil {
		if train, test, err = datasets.MNIST(dir); err != nil {
			return nil, nil, err
		}
		if mnist.train == nil {
			mnist.train, mnist.test = map[string]*datasets.Dataset{}, map[string]*datasets.Dataset{}
		}
		mnist.train[dir], mnist.test[dir] = train, test
	}
	return mnist.train[dir], mnist.test[dir], nil
}
