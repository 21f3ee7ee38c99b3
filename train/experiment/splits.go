package experiment

// The data of an MNIST experiment cut for its runs: subsets for quick
// trials, a validation split, a training subset scored without dropout,
// and loaders and scores for the sets a trainer does not evaluate itself.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/train"
)

// Splits are the datasets every run of an experiment shares.
type Splits struct {
	Train, Test *datasets.Dataset
	Val         *datasets.Dataset // nil without a validation split
	TrainEval   *datasets.Dataset // nil unless asked for
}

// MNISTSplits returns MNIST (MNIST("")) cut as f says (Flags.Subsets:
// -train-n, -test-n, seed f.Seed), with val training images held out as a
// validation split (seeded by f.Seed; none for val 0), and, for trainEval
// > 0, a seeded subset of at most trainEval of the remaining training
// images (stream "train-eval"), to score the network without dropout. At
// least one batch of batch images must remain for training.
func MNISTSplits(f Flags, val, batch, trainEval int) (Splits, error) {
	var s Splits
	tr, te, err := f.MNISTSubsets("")
	if err != nil {
		return s, err
	}
	s.Train, s.Test = tr, te
	if val > 0 {
		if val >= tr.Len()-batch {
			return s, fmt.Errorf("-val %d leaves fewer than one batch of %d of the %d training images", val, batch, tr.Len())
		}
		if s.Train, s.Val, err = tr.Split(float64(val)/float64(tr.Len()), f.Seed); err != nil {
			return s, err
		}
	}
	if trainEval > 0 {
		s.TrainEval, err = Subset(s.Train, min(trainEval, s.Train.Len()), f.Seed, "train-eval")
	}
	return s, err
}

// Loader returns a loader of d in batches of batch, shuffled by seed and
// dropping the last partial batch when shuffle is set (a training
// loader), in order and whole otherwise; nil for a nil d (a set not in
// use, whose Score is NaN).
func Loader(d *datasets.Dataset, batch int, shuffle bool, seed uint64) (*datasets.Loader, error) {
	if d == nil {
		return nil, nil
	}
	return datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: batch, Shuffle: shuffle, Seed: seed, DropLast: shuffle})
}

// Score evaluates t's model on l: the mean loss and the error rate
// (1 − accuracy); NaN for both when l is nil.
func Score(t *train.Trainer, l *datasets.Loader) (loss, errRate float64, err error) {
	if l == nil {
		return math.NaN(), math.NaN(), nil
	}
	e, err := t.Evaluate(l)
	return e.Loss, 1 - e.Accuracy, err
}
