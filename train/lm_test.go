package train_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train/safetensors"
)

// writeText writes the first n characters of Newton's Opticks to a file,
// the text a user of the char-GPT example would bring.
func writeText(t *testing.T, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "input.txt")
	if err := os.WriteFile(p, []byte(string([]rune(datasets.Opticks())[:n])), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The char-GPT Example's program, on a text the test writes: the
// validation loss (every position of the held-out windows, as it is
// trained) falls from ln(vocab), the loss of a uniform guess, and a run
// started again resumes instead of starting over.
func TestCharGPTExampleLearns(t *testing.T) {
	steps := 120
	if raceEnabled {
		steps = 24
	}
	text, dir := writeText(t, 20000), t.TempDir()
	res, sample, err := charGPT(context.Background(), text, dir, steps, nn.GPTConfig{Layers: 1, Heads: 2, Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	first, last := res.Evals[0], res.Evals[len(res.Evals)-1]
	vocab, _ := datasets.NewCharVocab(string([]rune(datasets.Opticks())[:20000]))
	t.Logf("validation loss %.4f at step 0 (ln %d = %.4f), %.4f at step %d; best %.4f at step %d; sample %q",
		first.ValLoss, vocab.Size(), math.Log(float64(vocab.Size())), last.ValLoss, last.Step, res.Best, res.BestStep, sample)
	if first.Step != 0 || math.Abs(first.ValLoss-math.Log(float64(vocab.Size()))) > 0.2 {
		t.Errorf("untrained validation loss %v, want about ln %d = %v", first.ValLoss, vocab.Size(), math.Log(float64(vocab.Size())))
	}
	if want := 0.9 * first.ValLoss; !(last.ValLoss < want) || last.Step != steps {
		t.Errorf("validation loss %v at step %d, want below %v at step %d", last.ValLoss, last.Step, want, steps)
	}
	if len([]rune(sample)) != 201 {
		t.Errorf("sample %q, want the prompt and 200 characters", sample)
	}
	f, err := safetensors.Load(filepath.Join(dir, "best.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Metadata["val_loss"]; got != strings.TrimSpace(fmtG(res.Best)) {
		t.Errorf("best.safetensors records val_loss %s, the run's best is %v", got, res.Best)
	}
	// The model file is the GPT's state dict, with its model_args, as
	// nanoGPT on torch 1.x loads it: the tied head's copy and the masks.
	m, err := safetensors.Load(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	_, head := m.Get("lm_head.weight")
	_, mask := m.Get("transformer.h.0.attn.bias")
	if !head || !mask || !strings.Contains(m.Metadata["model_args"], `"n_layer":"1"`) {
		t.Errorf("model.safetensors: lm_head.weight %v, masks %v, model_args %q; want the GPT's state dict with its Args", head, mask, m.Metadata["model_args"])
	}
	// A second call finds the finished run's checkpoint and resumes it:
	// nothing left to train, the same model.
	model, _ := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	res2, _, err := charGPT(context.Background(), text, dir, steps, nn.GPTConfig{Layers: 1, Heads: 2, Dim: 32})
	model2, _ := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil || res2.Steps != steps || !bytes.Equal(model, model2) {
		t.Errorf("second call: %v after %d steps, same model %v", err, res2.Steps, bytes.Equal(model, model2))
	}
}

func fmtG(v float64) string { return fmt.Sprint(v) }
