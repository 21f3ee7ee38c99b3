package transformer

// A character-level language task from a text file or the embedded
// Opticks, with a seeded sample of its validation windows to score.

import (
	"path/filepath"
	"slices"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph/rng"
)

// CharData is a character-level task (datasets.CharTask) and what a
// report says of its text.
type CharData struct {
	Name             string            // "Newton's Opticks (datasets.Opticks)" or the file's base name
	Chars            int               // characters in the text
	Train, Val, Eval *datasets.Dataset // Eval: the validation windows scored
	Vocab            *datasets.CharVocab
}

// CharText returns the text of file (datasets.LoadText) and its name, or
// Newton's Opticks (datasets.Opticks) when file is "".
func CharText(file string) (text, name string, err error) {
	if file == "" {
		return datasets.Opticks(), "Newton's Opticks (datasets.Opticks)", nil
	}
	text, err = datasets.LoadText(file)
	return text, filepath.Base(file), err
}

// NewCharData cuts text, named name, into windows (datasets.CharTask with
// cfg) and draws the validation windows to score: valWindows of them by
// the random stream (cfg.Seed, "validation windows"), in their order, or
// all when valWindows is 0 or not below their number.
func NewCharData(text, name string, cfg datasets.CharTaskConfig, valWindows int) (d CharData, err error) {
	d.Name, d.Chars = name, len([]rune(text))
	if d.Train, d.Val, d.Vocab, err = datasets.CharTask(text, cfg); err != nil {
		return d, err
	}
	d.Eval = d.Val
	if valWindows > 0 && valWindows < d.Val.Len() {
		idx := rng.New(cfg.Seed, "validation windows").Perm(d.Val.Len())[:valWindows]
		slices.Sort(idx)
		d.Eval, err = d.Val.Subset(idx)
	}
	return d, err
}
