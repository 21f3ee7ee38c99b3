package nn_test

// GPT.Loss ignores targets of −1, as nanoGPT's
// F.cross_entropy(..., ignore_index=-1): the mean is over the other
// positions, computed here from the logits.

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"gorgonia.org/tensor"
)

func TestGPTLossIgnoresMinusOneTargets(t *testing.T) {
	const batch, seq, vocab = 2, 4, 11
	cfg := nn.GPTConfig{BlockSize: seq, VocabSize: vocab, Layers: 1, Heads: 2, Dim: 8}
	g, ids, targets, logits, loss := gptLoss(t, tensor.Float64, 3, cfg, batch, seq)
	m, err := g.Compile(loss, graph.Keep(logits))
	if err != nil {
		t.Fatal(err)
	}
	y := []int{5, -1, 0, 10, -1, -1, 3, 7}
	if err := m.SetIDs(ids, []int{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetIDs(targets, y); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatalf("targets with −1: %v", err)
	}
	got, err := m.Loss()
	if err != nil {
		t.Fatal(err)
	}
	v, _ := m.Value(logits)
	z := graph.Float64s(v.(*tensor.Dense))
	var sum float64
	n := 0
	for r, label := range y {
		if label < 0 {
			continue
		}
		row := z[r*vocab : (r+1)*vocab]
		var s float64
		for _, x := range row {
			s += math.Exp(x)
		}
		sum += math.Log(s) - row[label]
		n++
	}
	if want := sum / float64(n); math.Abs(got-want) > 1e-12 {
		t.Errorf("loss %v, want the mean over the %d targets not −1: %v", got, n, want)
	}
	if err := m.CheckFinite(); err != nil {
		t.Error(err)
	}
	// Other negative targets are still errors.
	y[0] = -2
	if err := m.SetIDs(targets, y); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err == nil {
		t.Error("target −2: no error")
	}
}
