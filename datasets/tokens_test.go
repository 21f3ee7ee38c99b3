package datasets_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

// counting returns the ids 0, 1, …, n−1, so that a window's ids say where
// it starts.
func counting(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// Random windows as nanoGPT's get_batch: x = ids[s : s+T], y = ids[s+1 :
// s+T+1], s uniform in [0, len−T); a pure function of (seed, epoch,
// batch).
func TestTokenStreamWindows(t *testing.T) {
	const n, B, T = 40, 4, 5
	s, err := datasets.NewTokenStream(counting(n), datasets.TokenStreamConfig{BatchSize: B, BlockSize: T, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s.NumBatches() != n/(B*T) {
		t.Errorf("NumBatches = %d, want len/(B·T) = %d", s.NumBatches(), n/(B*T))
	}
	seen := map[int]bool{}
	draws := map[string]string{}
	for epoch := range 200 {
		for i := range s.NumBatches() {
			b, err := s.Batch(epoch, i)
			if err != nil {
				t.Fatal(err)
			}
			x, _ := b.Field("x")
			y, _ := b.Field("y")
			if b.Size != B || !slices.Equal(x.Shape, []int{B, T}) || !slices.Equal(y.Shape, []int{B, T}) || x.Values != nil {
				t.Fatalf("batch of %d real rows, x %v, y %v (values %v), want %d rows of %d ids", b.Size, x.Shape, y.Shape, x.Values, B, T)
			}
			for r, start := range b.Index {
				seen[start] = true
				for j := range T {
					if x.IDs[r*T+j] != start+j || y.IDs[r*T+j] != start+j+1 {
						t.Fatalf("window %d from %d: x %v y %v", r, start, x.IDs[r*T:(r+1)*T], y.IDs[r*T:(r+1)*T])
					}
				}
			}
			draws[fmt.Sprint(epoch, i)] = fmt.Sprint(b.Index)
		}
	}
	// 800 draws of 35 starts: every start in [0, 35) comes up, none after.
	for st := range n - T + 1 {
		if seen[st] != (st < n-T) {
			t.Errorf("start %d drawn: %v, want %v", st, seen[st], st < n-T)
		}
	}
	again, _ := datasets.NewTokenStream(counting(n), datasets.TokenStreamConfig{BatchSize: B, BlockSize: T, Seed: 7})
	b, _ := again.Batch(3, 1)
	if got := fmt.Sprint(b.Index); got != draws["3 1"] {
		t.Errorf("batch (3, 1) drawn again: %s, first %s", got, draws["3 1"])
	}
	if draws["3 1"] == draws["4 1"] {
		t.Errorf("epochs 3 and 4 drew the same windows %s", draws["3 1"])
	}
}

// Tiled windows cover every target once; the last batch repeats its own
// windows past the end and says how many are real.
func TestTokenStreamTile(t *testing.T) {
	const n, B, T = 23, 2, 4 // (23−1)/4 = 5 windows: batches of 2, 2, 1
	s, err := datasets.NewTokenStream(counting(n), datasets.TokenStreamConfig{BatchSize: B, BlockSize: T, Tile: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.NumBatches() != 3 {
		t.Fatalf("NumBatches = %d, want 3", s.NumBatches())
	}
	var targets []int
	for i := range 3 {
		b, _ := s.Batch(5, i)
		y, _ := b.Field("y")
		targets = append(targets, y.IDs[:b.Size*T]...)
		if i == 2 && (b.Size != 1 || !slices.Equal(b.Index, []int{16, 16})) {
			t.Errorf("last batch: %d real rows from %v, want 1 from [16 16]", b.Size, b.Index)
		}
	}
	if want := counting(n)[1:21]; !slices.Equal(targets, want) {
		t.Errorf("targets %v, want %v", targets, want)
	}
}

func TestTokenStreamErrors(t *testing.T) {
	for _, c := range []struct {
		ids  []int
		cfg  datasets.TokenStreamConfig
		want string
	}{
		{counting(10), datasets.TokenStreamConfig{BatchSize: 2, BlockSize: 10}, "10 ids, want at least BlockSize+1 = 11 for one window and its targets (a BlockSize ≤ 9 would fit)"},
		{counting(10), datasets.TokenStreamConfig{BatchSize: 0, BlockSize: 3}, "batch size 0"},
		{[]int{0, 1, -1, 2}, datasets.TokenStreamConfig{BatchSize: 1, BlockSize: 2}, "ids[2] = -1"},
	} {
		if _, err := datasets.NewTokenStream(c.ids, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
	var nilStream *datasets.TokenStream
	if _, err := nilStream.Batch(0, 0); err == nil || nilStream.NumBatches() != 0 {
		t.Errorf("nil TokenStream: %v", err)
	}
	s, _ := datasets.NewTokenStream(counting(10), datasets.TokenStreamConfig{BatchSize: 1, BlockSize: 3, Batches: 2})
	if _, err := s.Batch(0, 2); err == nil || !strings.Contains(err.Error(), "batch 2") {
		t.Errorf("batch past the epoch: %v", err)
	}
}

func TestSplitTokens(t *testing.T) {
	tr, val, err := datasets.SplitTokens(counting(10), 0.2)
	if err != nil || !slices.Equal(tr, counting(8)) || !slices.Equal(val, []int{8, 9}) {
		t.Errorf("SplitTokens(0…9, 0.2) = %v, %v, %v; want 0…7 and [8 9]", tr, val, err)
	}
	if _, _, err := datasets.SplitTokens(counting(3), 0.1); err == nil {
		t.Error("0.1 of 3 ids: no error")
	}
}

// A text too short for its chunks gets an error naming a ChunkLen that
// works; CharTask then accepts that length, and refuses the next one up.
func TestCharTaskNamesAChunkLenThatWorks(t *testing.T) {
	text := []rune(datasets.Opticks())[:3000]
	cfg := datasets.CharTaskConfig{Context: 32, ValFraction: 0.1, Seed: 1}
	_, _, _, err := datasets.CharTask(string(text), cfg)
	m := regexp.MustCompile(`ChunkLen (\d+) would work`).FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		t.Fatalf("got %v, want an error naming a ChunkLen that would work", err)
	}
	t.Log(err)
	cfg.ChunkLen, _ = strconv.Atoi(m[1])
	if _, _, _, err := datasets.CharTask(string(text), cfg); err != nil {
		t.Errorf("the suggested ChunkLen %d: %v", cfg.ChunkLen, err)
	}
	cfg.ChunkLen++
	if _, _, _, err := datasets.CharTask(string(text), cfg); err == nil {
		t.Errorf("ChunkLen %d, one above the suggestion, works too: the suggestion is not the longest", cfg.ChunkLen)
	}
	_, _, _, err = datasets.CharTask(string(text[:40]), datasets.CharTaskConfig{Context: 32, ValFraction: 0.1, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "smaller Context") {
		t.Errorf("40 characters, context 32: got %v, want a hint to shorten the context", err)
	}
}
