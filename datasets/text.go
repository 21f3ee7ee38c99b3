package datasets

// Character-level language modelling: a vocabulary of characters and
// datasets of (previous K characters → next character).

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode/utf8"
)

//go:embed text/opticks.txt
var opticks string

// Opticks returns the full text of Newton's Opticks (4th edition, 1730;
// public domain), about 567000 characters of English prose with 91 distinct
// characters. See text/README.md for its origin.
func Opticks() string { return opticks }

// LoadText reads a UTF-8 text file for CharTask. The path must name a
// regular file (devices and FIFOs are refused) of at most MaxTextBytes
// bytes; the size is checked before reading.
func LoadText(path string) (string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return "", fmt.Errorf("datasets.LoadText: %w", err)
	}
	defer f.Close()
	if size > MaxTextBytes {
		return "", fmt.Errorf("datasets.LoadText: %s: %d bytes, more than datasets.MaxTextBytes = %d", path, size, MaxTextBytes)
	}
	// The limit also covers a file that grows while it is read.
	b, err := io.ReadAll(io.LimitReader(f, MaxTextBytes+1))
	if err != nil {
		return "", fmt.Errorf("datasets.LoadText: %s: %w", path, err)
	}
	if int64(len(b)) > MaxTextBytes {
		return "", fmt.Errorf("datasets.LoadText: %s: more than datasets.MaxTextBytes = %d bytes (the file grew while it was read)", path, MaxTextBytes)
	}
	if err := checkText(string(b)); err != nil {
		return "", fmt.Errorf("datasets.LoadText: %s: %w", path, err)
	}
	return string(b), nil
}

func checkText(s string) error {
	if s == "" {
		return fmt.Errorf("empty text")
	}
	if !utf8.ValidString(s) {
		for i := 0; i < len(s); {
			r, w := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && w == 1 {
				return fmt.Errorf("invalid UTF-8 at byte %d, want UTF-8 text", i)
			}
			i += w
		}
	}
	return nil
}

// CharVocab maps characters (Unicode code points) to indices 0..Size()-1,
// in increasing code point order.
type CharVocab struct {
	runes []rune
	index map[rune]int
}

// NewCharVocab returns the vocabulary of the distinct characters of text.
func NewCharVocab(text string) (*CharVocab, error) {
	if err := checkText(text); err != nil {
		return nil, fmt.Errorf("datasets.NewCharVocab: %w", err)
	}
	index := map[rune]int{}
	for _, r := range text {
		index[r] = 0
	}
	v := &CharVocab{runes: make([]rune, 0, len(index)), index: index}
	for r := range index {
		v.runes = append(v.runes, r)
	}
	slices.Sort(v.runes)
	for i, r := range v.runes {
		index[r] = i
	}
	return v, nil
}

// errNilVocab is returned by the methods of a nil CharVocab.
var errNilVocab = fmt.Errorf("datasets: nil CharVocab (use NewCharVocab)")

// Size returns the number of characters (0 for a nil CharVocab).
func (v *CharVocab) Size() int {
	if v == nil {
		return 0
	}
	return len(v.runes)
}

// Runes returns the characters in index order (nil for a nil CharVocab).
func (v *CharVocab) Runes() []rune {
	if v == nil {
		return nil
	}
	return slices.Clone(v.runes)
}

// Encode returns the index of every character of s.
func (v *CharVocab) Encode(s string) ([]int, error) {
	if v == nil {
		return nil, errNilVocab
	}
	ids := make([]int, 0, len(s))
	for at, r := range s {
		i, ok := v.index[r]
		if !ok {
			if r == utf8.RuneError {
				return nil, fmt.Errorf("datasets.CharVocab.Encode: invalid UTF-8 at byte %d", at)
			}
			return nil, fmt.Errorf("datasets.CharVocab.Encode: character %q (U+%04X) at byte %d is not in the vocabulary", r, r, at)
		}
		ids = append(ids, i)
	}
	return ids, nil
}

// Decode returns the text of the indices ids.
func (v *CharVocab) Decode(ids []int) (string, error) {
	if v == nil {
		return "", errNilVocab
	}
	out := make([]rune, len(ids))
	for k, i := range ids {
		if i < 0 || i >= len(v.runes) {
			return "", fmt.Errorf("datasets.CharVocab.Decode: ids[%d] = %d, want 0 ≤ id < %d", k, i, len(v.runes))
		}
		out[k] = v.runes[i]
	}
	return string(out), nil
}

// Windows returns the dataset of every position of text that has k
// characters before it: the k previous character indices as features (in
// reading order, as float32, for an embedding layer), the character's index
// as the label. It holds len(text)−k examples of k float32 each, at most
// MaxElements values.
func (v *CharVocab) Windows(text string, k int) (*Dataset, error) {
	if v == nil {
		return nil, errNilVocab
	}
	if k <= 0 {
		return nil, fmt.Errorf("datasets.CharVocab.Windows: context %d, want > 0", k)
	}
	if n := utf8.RuneCountInString(text); n > k {
		if _, err := elements(fmt.Sprintf("datasets.CharVocab.Windows: %d windows of %d characters", n-k, k), n-k, k); err != nil {
			return nil, err
		}
	}
	ids, err := v.Encode(text)
	if err != nil {
		return nil, err
	}
	if len(ids) <= k {
		return nil, fmt.Errorf("datasets.CharVocab.Windows: %d characters, want more than the context %d", len(ids), k)
	}
	d := v.newWindows("chars", k)
	d.addWindows(ids, k)
	return d, nil
}

func (v *CharVocab) newWindows(name string, k int) *Dataset {
	names := make([]string, len(v.runes))
	for i, r := range v.runes {
		names[i] = string(r)
	}
	return &Dataset{Name: name, Features: k, Labels: []int{}, Classes: len(v.runes), ClassNames: names}
}

// addWindows appends the windows whose context and target lie in ids.
func (d *Dataset) addWindows(ids []int, k int) {
	for t := k; t < len(ids); t++ {
		for _, c := range ids[t-k : t] {
			d.X = append(d.X, float32(c))
		}
		d.Labels = append(d.Labels, ids[t])
	}
}

// CharTaskConfig configures CharTask.
type CharTaskConfig struct {
	Context     int     // K, the number of previous characters per example
	ValFraction float64 // fraction of chunks held out for validation, in (0, 1)
	Seed        uint64  // chooses the validation chunks
	ChunkLen    int     // characters per chunk; 0 means 4096
}

// CharTask builds a next-character prediction task from text: a vocabulary
// of all its characters and training and validation datasets of windows
// (see CharVocab.Windows).
//
// Neighbouring windows share all but one character, so a split of windows
// at random would put nearly every validation window's text in the training
// set. Instead the text is cut into chunks of ChunkLen characters, a seeded
// choice of round(ValFraction·chunks) chunks (SplitIndices) is held out, and
// windows never cross a chunk boundary. No validation context or target is
// then seen in training; the cost is the first K positions of each chunk.
// All windows together may hold at most MaxElements values.
func CharTask(text string, cfg CharTaskConfig) (train, val *Dataset, vocab *CharVocab, err error) {
	if cfg.ChunkLen == 0 {
		cfg.ChunkLen = 4096
	}
	if cfg.Context <= 0 || cfg.ChunkLen <= cfg.Context {
		return nil, nil, nil, fmt.Errorf("datasets.CharTask: context %d and chunk length %d, want 0 < context < chunk length",
			cfg.Context, cfg.ChunkLen)
	}
	if vocab, err = NewCharVocab(text); err != nil {
		return nil, nil, nil, fmt.Errorf("datasets.CharTask: %w", err)
	}
	ids, err := vocab.Encode(text)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("datasets.CharTask: %w", err)
	}
	// Windows lie within chunks: ChunkLen−K per full chunk, the rest in the
	// last one. Checked before building them.
	full, rest := len(ids)/cfg.ChunkLen, len(ids)%cfg.ChunkLen
	windows := full*(cfg.ChunkLen-cfg.Context) + max(0, rest-cfg.Context)
	if _, err := elements(fmt.Sprintf("datasets.CharTask: %d windows of %d characters", windows, cfg.Context), windows, cfg.Context); err != nil {
		return nil, nil, nil, err
	}
	chunks := full
	if rest > 0 {
		chunks++
	}
	_, valChunks, err := SplitIndices(chunks, cfg.ValFraction, cfg.Seed)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("datasets.CharTask: %d characters in %d chunks of %d: %w%s", len(ids), chunks, cfg.ChunkLen, err, chunkHint(len(ids), cfg))
	}
	train = vocab.newWindows("chars (train)", cfg.Context)
	val = vocab.newWindows("chars (validation)", cfg.Context)
	for c := range chunks {
		d := train
		if _, held := slices.BinarySearch(valChunks, c); held {
			d = val
		}
		d.addWindows(ids[c*cfg.ChunkLen:min((c+1)*cfg.ChunkLen, len(ids))], cfg.Context)
	}
	if train.Len() == 0 || val.Len() == 0 {
		return nil, nil, nil, fmt.Errorf("datasets.CharTask: %d training and %d validation windows, want both > 0 (text of %d characters, context %d, chunk length %d)%s",
			train.Len(), val.Len(), len(ids), cfg.Context, cfg.ChunkLen, chunkHint(len(ids), cfg))
	}
	return train, val, vocab, nil
}

// chunkHint names the longest ChunkLen below cfg's with which a text of n
// characters splits into training and validation windows (the same checks
// as CharTask, run on the chunk sizes alone), or the context that would
// fit when no chunk length does.
func chunkHint(n int, cfg CharTaskConfig) string {
	if !(cfg.ValFraction > 0 && cfg.ValFraction < 1) {
		return "" // SplitIndices's error says what is wrong
	}
	works := func(l int) bool {
		chunks := (n + l - 1) / l
		_, held, err := SplitIndices(chunks, cfg.ValFraction, cfg.Seed)
		if err != nil {
			return false
		}
		windows := func(c int) int { return max(0, min(l, n-c*l)-cfg.Context) }
		var tw, vw int
		for c := range chunks {
			if _, ok := slices.BinarySearch(held, c); ok {
				vw += windows(c)
			} else {
				tw += windows(c)
			}
		}
		return tw > 0 && vw > 0
	}
	// The fewest chunks SplitIndices accepts bound the longest chunk; the
	// search goes down from there, and the first few lengths usually work.
	fewest := 2
	for ; fewest < n; fewest++ {
		if v := int(math.Round(cfg.ValFraction * float64(fewest))); v >= 1 && v <= fewest-1 {
			break
		}
	}
	longest := min(cfg.ChunkLen-1, (n+fewest-2)/(fewest-1))
	for l, tries := longest, 0; l > cfg.Context && tries < 4096; l, tries = l-1, tries+1 {
		if works(l) {
			return fmt.Sprintf("; ChunkLen %d would work for this text", l)
		}
	}
	return fmt.Sprintf("; no ChunkLen fits %d characters with context %d: use a longer text or a smaller Context", n, cfg.Context)
}
