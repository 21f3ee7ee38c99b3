package experiment

// Comma-separated list flags: -lrs 0.1,0.3 -acts relu,gelu. Each type is a
// flag.Value whose value before Set is the default:
//
//	c.LRs = experiment.Floats{0.1, 0.3}
//	flag.Var(&c.LRs, "lrs", "learning rates, comma-separated")

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
)

// Floats is a list of distinct finite numbers.
type Floats []float64

// Ints is a list of integers.
type Ints []int

// Strings is a list of distinct non-empty strings.
type Strings []string

// Activations is a list of distinct activations, by activation.ParseActivation
// names.
type Activations []activation.Activation

func (f *Floats) String() string {
	return join(*f, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) })
}
func (f *Ints) String() string        { return join(*f, strconv.Itoa) }
func (f *Strings) String() string     { return join(*f, func(s string) string { return s }) }
func (f *Activations) String() string { return join(*f, activation.Activation.Name) }

// Set replaces the list with the numbers in s.
func (f *Floats) Set(s string) error {
	return set((*[]float64)(f), s, func(item string, out []float64) (float64, error) {
		v, err := strconv.ParseFloat(item, 64)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			return 0, fmt.Errorf("%q is not a finite number", item)
		case slices.Contains(out, v):
			return 0, fmt.Errorf("%q is listed twice", item)
		}
		return v, nil
	})
}

// Set replaces the list with the integers in s.
func (f *Ints) Set(s string) error {
	return set((*[]int)(f), s, func(item string, _ []int) (int, error) {
		v, err := strconv.Atoi(item)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", item)
		}
		return v, nil
	})
}

// Set replaces the list with the items of s.
func (f *Strings) Set(s string) error {
	return set((*[]string)(f), s, func(item string, out []string) (string, error) {
		if slices.Contains(out, item) {
			return "", fmt.Errorf("%q is listed twice", item)
		}
		return item, nil
	})
}

// Set replaces the list with the activations named in s.
func (f *Activations) Set(s string) error {
	return set((*[]activation.Activation)(f), s, func(item string, out []activation.Activation) (activation.Activation, error) {
		a, err := activation.ParseActivation(item)
		if err == nil && slices.Contains(out, a) {
			err = fmt.Errorf("%s is listed twice", a.Name())
		}
		return a, err
	})
}

// set parses the comma-separated items of s (blanks around them ignored)
// into *list.
func set[T any](list *[]T, s string, parse func(item string, sofar []T) (T, error)) error {
	var out []T
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		v, err := parse(item, out)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return fmt.Errorf("empty list %q", s)
	}
	*list = out
	return nil
}

func join[T any](v []T, format func(T) string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = format(x)
	}
	return strings.Join(s, ",")
}
