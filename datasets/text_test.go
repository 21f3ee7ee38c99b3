package datasets_test

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/geluproject/gelu/datasets"
)

func TestOpticksIsTheGoDistributionFile(t *testing.T) {
	text := datasets.Opticks()
	if sum := md5.Sum([]byte(text)); hex.EncodeToString(sum[:]) != "a2c87e985b24115b85a59cb86a2ff148" {
		t.Errorf("embedded text md5 %x differs from the copy documented in text/README.md", sum)
	}
	if !strings.HasPrefix(text, "Produced by") || !strings.Contains(text, "OPTICKS:") {
		t.Error("embedded text does not look like Opticks")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	orig, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "testdata", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		t.Skipf("the Go distribution's copy is absent: %v", err)
	}
	if string(orig) != text {
		t.Error("embedded text differs from $GOROOT/src/testdata/Isaac.Newton-Opticks.txt")
	}
}

func TestCharVocabRoundTrip(t *testing.T) {
	text := datasets.Opticks()
	v, err := datasets.NewCharVocab(text)
	if err != nil {
		t.Fatal(err)
	}
	// Independent count of distinct code points, and order.
	seen := map[rune]bool{}
	for _, r := range text {
		seen[r] = true
	}
	runes := v.Runes()
	if v.Size() != len(seen) || len(runes) != len(seen) || !slices.IsSorted(runes) {
		t.Fatalf("vocabulary of %d characters (sorted: %v), want %d distinct", v.Size(), slices.IsSorted(runes), len(seen))
	}
	ids, err := v.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != utf8.RuneCountInString(text) {
		t.Errorf("%d ids for %d characters", len(ids), utf8.RuneCountInString(text))
	}
	back, err := v.Decode(ids)
	if err != nil || back != text {
		t.Errorf("Decode(Encode(text)) differs from text (err %v)", err)
	}
	rs := []rune(text)
	for i, id := range ids[:200] {
		if runes[id] != rs[i] {
			t.Fatalf("id %d at %d is %q", id, i, runes[id])
		}
	}
	_, err = v.Encode("light → colour")
	wantErr(t, err, `'→'`, "U+2192", "byte 6", "not in the vocabulary")
	_, err = v.Decode([]int{0, 91})
	wantErr(t, err, "ids[1] = 91", "< 91")
	_, err = datasets.NewCharVocab("ok\xffno")
	wantErr(t, err, "invalid UTF-8 at byte 2")
	_, err = datasets.NewCharVocab("")
	wantErr(t, err, "empty text")
}

func TestWindows(t *testing.T) {
	v, _ := datasets.NewCharVocab("abcé")
	d, err := v.Windows("abécab", 2)
	if err != nil {
		t.Fatal(err)
	}
	// a=0 b=1 c=2 é=3: windows ab→é, bé→c, éc→a, ca→b.
	wantX := []float32{0, 1, 1, 3, 3, 2, 2, 0}
	wantY := []int{3, 2, 0, 1}
	if !slices.Equal(d.X, wantX) || !slices.Equal(d.Labels, wantY) || d.Classes != 4 || d.ClassNames[3] != "é" {
		t.Errorf("windows X %v labels %v classes %d names %v", d.X, d.Labels, d.Classes, d.ClassNames)
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
	_, err = v.Windows("ab", 2)
	wantErr(t, err, "2 characters, want more than the context 2")
	_, err = v.Windows("abc", 0)
	wantErr(t, err, "context 0")
}

// Every chunk of this text is one repeated letter, so a window's letters
// say which chunk it came from.
func TestCharTaskHoldsOutWholeChunks(t *testing.T) {
	const chunk, chunks, k = 20, 26, 4
	var sb strings.Builder
	for c := range chunks {
		sb.WriteString(strings.Repeat(string(rune('a'+c)), chunk))
	}
	sb.WriteString("zz") // a short last chunk: too short for any window
	text := sb.String()
	cfg := datasets.CharTaskConfig{Context: k, ValFraction: 0.25, Seed: 9, ChunkLen: chunk}
	train, val, v, err := datasets.CharTask(text, cfg)
	if err != nil {
		t.Fatal(err)
	}
	letters := func(d *datasets.Dataset) map[rune]int {
		m := map[rune]int{}
		for i := range d.Len() {
			name := d.ClassNames[d.Labels[i]]
			for _, x := range d.X[i*k : (i+1)*k] {
				if d.ClassNames[int(x)] != name {
					t.Fatalf("%s window %d mixes chunks", d.Name, i)
				}
			}
			m[[]rune(name)[0]]++
		}
		return m
	}
	tl, vl := letters(train), letters(val)
	// 27 chunks (the last of 2 characters); the held-out ones are as
	// documented, round(0.25·27) = 7 chosen by SplitIndices.
	_, held, _ := datasets.SplitIndices(chunks+1, 0.25, 9)
	if len(held) != 7 {
		t.Fatalf("SplitIndices held out %d of 27 chunks", len(held))
	}
	for _, c := range held {
		if r := rune('a' + c); c < chunks && vl[r] == 0 {
			t.Errorf("chunk %d (%q) is held out but has no validation windows", c, r)
		}
	}
	if len(tl)+len(vl) != chunks {
		t.Errorf("%d validation and %d training chunks with windows, want %d in all", len(vl), len(tl), chunks)
	}
	for r, n := range vl {
		if !slices.Contains(held, int(r-'a')) {
			t.Errorf("chunk %q is in the validation set but not held out", r)
		}
		if tl[r] != 0 {
			t.Errorf("chunk %q is in both splits", r)
		}
		if n != chunk-k {
			t.Errorf("chunk %q has %d windows, want %d", r, n, chunk-k)
		}
	}
	if train.Len()+val.Len() != chunks*(chunk-k) {
		t.Errorf("%d windows in all, want %d", train.Len()+val.Len(), chunks*(chunk-k))
	}
	if v.Size() != 26 || train.Classes != 26 {
		t.Errorf("vocabulary %d, classes %d; want 26", v.Size(), train.Classes)
	}
	_, val2, _, _ := datasets.CharTask(text, cfg)
	cfg.Seed = 10
	_, val3, _, _ := datasets.CharTask(text, cfg)
	if !slices.Equal(val.Labels, val2.Labels) || slices.Equal(val.Labels, val3.Labels) {
		t.Error("the held-out chunks are not a deterministic function of the seed")
	}

	_, _, _, err = datasets.CharTask(text, datasets.CharTaskConfig{Context: 20, ValFraction: 0.1, ChunkLen: 20})
	wantErr(t, err, "context 20 and chunk length 20")
	_, _, _, err = datasets.CharTask("short", datasets.CharTaskConfig{Context: 2, ValFraction: 0.5})
	wantErr(t, err, "1 chunks")
}

func TestCharTaskOnOpticks(t *testing.T) {
	train, val, v, err := datasets.CharTask(datasets.Opticks(), datasets.CharTaskConfig{Context: 8, ValFraction: 0.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := utf8.RuneCountInString(datasets.Opticks())
	chunks := (n + 4095) / 4096
	// Every chunk loses its first 8 positions.
	if got := train.Len() + val.Len(); got != n-8*chunks {
		t.Errorf("%d windows, want %d", got, n-8*chunks)
	}
	frac := float64(val.Len()) / float64(train.Len()+val.Len())
	if frac < 0.08 || frac > 0.12 {
		t.Errorf("validation fraction %.3f, want about 0.1", frac)
	}
	if err := train.Validate(); err != nil {
		t.Error(err)
	}
	// A window decodes to the text it came from.
	ctx := make([]int, 8)
	for i, x := range train.X[:8] {
		ctx[i] = int(x)
	}
	s, _ := v.Decode(append(ctx, train.Labels[0]))
	if !strings.Contains(datasets.Opticks(), s) {
		t.Errorf("window %q is not in the text", s)
	}

	dir := t.TempDir()
	p := filepath.Join(dir, "t.txt")
	os.WriteFile(p, []byte("bad \xc3"), 0o644)
	_, err = datasets.LoadText(p)
	wantErr(t, err, p, "invalid UTF-8 at byte 4")
	os.WriteFile(p, []byte("good"), 0o644)
	if s, err := datasets.LoadText(p); err != nil || s != "good" {
		t.Errorf("LoadText = %q, %v", s, err)
	}
}
