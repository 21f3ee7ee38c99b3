package datasets

// Language-model batches from one long sequence of token ids, as nanoGPT's
// get_batch draws them: windows of T+1 tokens, the first T the input, the
// last T the targets.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/geluproject/gelu/graph/rng"
)

// SplitTokens cuts ids into a training part and the last
// round(valFraction·len(ids)) ids for validation, as nanoGPT's prepare.py
// holds out the end of its text: windows drawn from one part never see the
// other's tokens (except across the single boundary). Both parts are views
// of ids.
func SplitTokens(ids []int, valFraction float64) (train, val []int, err error) {
	if !(valFraction > 0 && valFraction < 1) {
		return nil, nil, fmt.Errorf("datasets.SplitTokens: validation fraction %v, want 0 < fraction < 1", valFraction)
	}
	nVal := int(math.Round(valFraction * float64(len(ids))))
	if nVal < 1 || nVal >= len(ids) {
		return nil, nil, fmt.Errorf("datasets.SplitTokens: validation fraction %v of %d ids leaves %d for validation and %d for training, want at least 1 in each",
			valFraction, len(ids), nVal, len(ids)-nVal)
	}
	cut := len(ids) - nVal
	return ids[:cut:cut], ids[cut:], nil
}

// TokenStreamConfig configures a TokenStream. BatchSize and BlockSize are
// nanoGPT's batch_size and block_size.
type TokenStreamConfig struct {
	BatchSize int // windows per batch
	BlockSize int // T: tokens per window (the model's context)
	// Batches is the number of batches of an epoch. 0 means
	// len(ids)/(BatchSize·BlockSize), at least 1: an epoch then draws
	// about as many tokens as the stream holds (or, with Tile, every
	// window once).
	Batches int
	// Seed selects the random windows: batch i of epoch e draws its starts
	// from the stream rng.New(Seed, "tokens epoch <e> batch <i>").
	Seed uint64
	// Tile lays the windows end to end from the first token instead of
	// drawing them at random: window w covers ids[w·T : (w+1)·T+1], so
	// every token after the first is a target exactly once. Every epoch
	// is then the same; with Batches 0 an epoch is every window. This is
	// the held-out set to validate on: each evaluation scores the same
	// positions.
	Tile bool
}

// TokenStream serves batches of windows of a sequence of token ids. Batch
// returns the fields "x" and "y", each (BatchSize × BlockSize) integer
// ids: y is x shifted left by one token, so position t of window r is
// trained to predict y[r][t] from x[r][0…t]. Batch (epoch, i) is a pure
// function of (Seed, epoch, i), so training resumes exactly. A
// TokenStream is not safe for concurrent use.
type TokenStream struct {
	ids     []int
	cfg     TokenStreamConfig
	windows int // Tile: windows in the stream
	x, y    []int
	index   []int
	fields  []Field
}

// NewTokenStream checks ids (every id ≥ 0, at least BlockSize+1 of them)
// and the configuration. The stream reads ids at every call: do not
// change them while it is in use.
func NewTokenStream(ids []int, cfg TokenStreamConfig) (*TokenStream, error) {
	switch {
	case cfg.BatchSize <= 0 || cfg.BlockSize <= 0 || cfg.Batches < 0:
		return nil, fmt.Errorf("datasets.NewTokenStream: batch size %d, block size %d, %d batches; want sizes > 0 and batches ≥ 0",
			cfg.BatchSize, cfg.BlockSize, cfg.Batches)
	case len(ids) <= cfg.BlockSize:
		return nil, fmt.Errorf("datasets.NewTokenStream: %d ids, want at least BlockSize+1 = %d for one window and its targets (a BlockSize ≤ %d would fit)",
			len(ids), cfg.BlockSize+1, max(len(ids)-1, 0))
	}
	if _, err := elements(fmt.Sprintf("datasets.NewTokenStream: batches of %d windows of %d", cfg.BatchSize, cfg.BlockSize), cfg.BatchSize, cfg.BlockSize); err != nil {
		return nil, err
	}
	for i, id := range ids {
		if id < 0 {
			return nil, fmt.Errorf("datasets.NewTokenStream: ids[%d] = %d, want token ids ≥ 0", i, id)
		}
	}
	s := &TokenStream{ids: ids, cfg: cfg}
	n := cfg.BatchSize * cfg.BlockSize
	if cfg.Tile {
		s.windows = (len(ids) - 1) / cfg.BlockSize
	}
	if s.cfg.Batches == 0 {
		s.cfg.Batches = max(1, len(ids)/n)
		if cfg.Tile {
			s.cfg.Batches = (s.windows + cfg.BatchSize - 1) / cfg.BatchSize
		}
	}
	s.x, s.y, s.index = make([]int, n), make([]int, n), make([]int, cfg.BatchSize)
	shape := []int{cfg.BatchSize, cfg.BlockSize}
	s.fields = []Field{{Name: "x", Shape: shape, IDs: s.x}, {Name: "y", Shape: shape, IDs: s.y}}
	return s, nil
}

// NumBatches returns the number of batches of an epoch (0 for a nil
// TokenStream).
func (s *TokenStream) NumBatches() int {
	if s == nil {
		return 0
	}
	return s.cfg.Batches
}

// BatchSize returns the windows per batch (0 for a nil TokenStream).
func (s *TokenStream) BatchSize() int {
	if s == nil {
		return 0
	}
	return s.cfg.BatchSize
}

// Batch returns batch i of epoch e: BatchSize windows, as the fields "x"
// and "y" (see TokenStream) with Index holding each window's first
// position in the ids. Random windows start uniformly in
// [0, len(ids)−BlockSize), as nanoGPT's torch.randint(len(data) −
// block_size). Tiled windows are taken in order; in the last batch the
// rows past the last window repeat the batch's own windows cyclically and
// Size counts the real ones. The slices belong to the stream and are
// overwritten by the next call.
func (s *TokenStream) Batch(epoch, i int) (Batch, error) {
	if s == nil || s.x == nil {
		return Batch{}, fmt.Errorf("datasets: nil TokenStream (use NewTokenStream)")
	}
	if epoch < 0 || i < 0 || i >= s.cfg.Batches {
		return Batch{}, fmt.Errorf("datasets.TokenStream: epoch %d, batch %d; want epoch ≥ 0 and 0 ≤ batch < %d", epoch, i, s.cfg.Batches)
	}
	b, t := s.cfg.BatchSize, s.cfg.BlockSize
	size := b
	if s.cfg.Tile {
		first := i * b
		size = min(b, s.windows-first)
		for r := range b {
			s.index[r] = (first + r%size) * t
		}
	} else {
		r := rng.New(s.cfg.Seed, "tokens epoch "+strconv.Itoa(epoch)+" batch "+strconv.Itoa(i))
		for k := range b {
			s.index[k] = r.IntN(len(s.ids) - t)
		}
	}
	for r, start := range s.index {
		copy(s.x[r*t:(r+1)*t], s.ids[start:start+t])
		copy(s.y[r*t:(r+1)*t], s.ids[start+1:start+t+1])
	}
	return Batch{Index: s.index, Size: size, Fields: s.fields}, nil
}
