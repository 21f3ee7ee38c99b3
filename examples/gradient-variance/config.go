package main

// Parsing and checking the command-line configuration.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/ops"
)

func parseLists(c *config, acts, hidden, windowLRs string) error {
	for _, s := range strings.Split(windowLRs, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v >= 0) {
			return fmt.Errorf("-window-lrs: %q is not a learning rate ≥ 0", s)
		}
		c.WindowLRs = append(c.WindowLRs, v)
	}
	for _, s := range strings.Split(acts, ",") {
		a, err := ops.ParseActivation(s)
		if err != nil {
			return fmt.Errorf("-acts: %w", err)
		}
		c.Acts = append(c.Acts, a)
	}
	for _, s := range strings.Split(hidden, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v <= 0 {
			return fmt.Errorf("-hidden: %q is not a positive width", s)
		}
		c.Hidden = append(c.Hidden, v)
	}
	return nil
}

func (c config) validate() error {
	switch {
	case len(c.Acts) == 0 || len(c.Hidden) == 0 || len(c.WindowLRs) == 0:
		return fmt.Errorf("need at least one activation, hidden layer and window learning rate")
	case c.Batch < 1 || c.InitSamples < 2 || c.TrainSteps < 0 || c.Window < 2 || c.Blocks < 2 || c.Window%c.Blocks != 0 ||
		c.VarBlock < 2 || c.UnitBatches < 1 || c.Workers < 1 || c.TrainN < 0 || c.TestN < 0:
		return fmt.Errorf("-batch %d -init-samples %d -train-steps %d -window %d -blocks %d -var-block %d -unit-batches %d -workers %d -train-n %d -test-n %d: "+
			"want positive sizes, at least 2 blocks dividing the window, at least 2 samples and steps per block",
			c.Batch, c.InitSamples, c.TrainSteps, c.Window, c.Blocks, c.VarBlock, c.UnitBatches, c.Workers, c.TrainN, c.TestN)
	case !(c.LR >= 0) || !(c.Momentum >= 0 && c.Momentum < 1) || !(c.BurnEps > 0 && c.BurnEps < 1):
		return fmt.Errorf("-lr %v -momentum %v -burn-eps %v: want a learning rate ≥ 0, momentum in [0, 1), burn-eps in (0, 1)",
			c.LR, c.Momentum, c.BurnEps)
	}
	return nil
}
