package main

// Parsing and checking the command-line configuration.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/ops"
)

func parseLists(c *config, acts, lrs, biases, hidden string) error {
	for _, s := range split(acts) {
		a, err := ops.ParseActivation(s)
		if err != nil {
			return fmt.Errorf("-acts: %w", err)
		}
		c.Acts = append(c.Acts, a)
	}
	for _, s := range split(lrs) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) {
			return fmt.Errorf("-lrs: %q is not a positive number", s)
		}
		c.LRs = append(c.LRs, v)
	}
	for _, s := range split(hidden) {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			return fmt.Errorf("-hidden: %q is not a positive width", s)
		}
		c.Hidden = append(c.Hidden, v)
	}
	c.Biases = split(biases)
	return nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (c config) validate() error {
	switch {
	case len(c.Acts) == 0 || len(c.LRs) == 0 || len(c.Biases) == 0 || len(c.Hidden) == 0:
		return fmt.Errorf("need at least one activation, learning rate, bias init and hidden layer")
	case c.Batch < 1 || c.Steps < 1 || c.NeuronSteps < 1 || c.ProbeEvery < 1 || c.ProbeN < 1 || c.TestN < 0 || c.TrainN < 0 || c.Workers < 1:
		return fmt.Errorf("-batch %d -steps %d -neuron-steps %d -probe-every %d -probe-n %d -test-n %d -train-n %d -workers %d: want positive values (test-n, train-n ≥ 0)",
			c.Batch, c.Steps, c.NeuronSteps, c.ProbeEvery, c.ProbeN, c.TestN, c.TrainN, c.Workers)
	case !(c.Momentum >= 0 && c.Momentum < 1) || !(c.Tol >= 0 && c.Tol < 1):
		return fmt.Errorf("-momentum %v -tol %v: want both in [0, 1)", c.Momentum, c.Tol)
	}
	for _, b := range c.Biases {
		if _, err := strconv.ParseFloat(b, 64); err != nil && b != "default" {
			return fmt.Errorf("-bias: %q, want default or a number", b)
		}
	}
	return nil
}
