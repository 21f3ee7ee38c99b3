package experiment

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/geluproject/gelu/graph"
)

// Inits is a list flag of distinct parameter initializations, each
// "default" (the layer's own, PyTorch's) or a constant: -bias default,-1,-3.
// ParseInit turns one into a graph.Init.
type Inits []string

func (f *Inits) String() string { return join(*f, func(s string) string { return s }) }

// Set replaces the list with the initializations in s.
func (f *Inits) Set(s string) error {
	return set((*[]string)(f), s, func(item string, out []string) (string, error) {
		if _, err := ParseInit(item); err != nil {
			return "", err
		}
		if slices.Contains(out, item) {
			return "", fmt.Errorf("%q is listed twice", item)
		}
		return item, nil
	})
}

// Check reports the items that are neither "default" nor a number, for a
// list set in code rather than by Set; CheckFlags calls it.
func (f Inits) Check() error {
	for _, s := range f {
		if _, err := ParseInit(s); err != nil {
			return err
		}
	}
	return nil
}

// ParseInit returns the initialization s names: nil for "default" (a
// layer keeps its own), graph.Constant(v) for a number v.
func ParseInit(s string) (graph.Init, error) {
	if s == "default" {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%q, want default or a number", s)
	}
	return graph.Constant(v), nil
}
