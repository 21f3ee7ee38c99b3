package train_test

// The files a run leaves for a module: what LoadWeights reads of them, and
// (Model.Module) what PyTorch's strict load_state_dict reads.

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// regressionMLP is the MLP of the regression setup, built afresh on a
// graph of its own with another seed (other initial weights).
func regressionMLP(t *testing.T, seed uint64) *nn.MLP {
	t.Helper()
	g, _ := graph.New(tensor.Float64, seed)
	m, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{16}, Out: 2, Dropout: 0.1, Activation: activation.GELU})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// graphBits is every parameter value of g, in order, as float64 bits.
func graphBits(g *graph.Graph) []uint64 {
	var out []uint64
	for _, p := range g.ParamTensors() {
		for _, v := range graph.Float64s(p.Value) {
			out = append(out, math.Float64bits(v))
		}
	}
	return out
}

// A trainer's model file and checkpoint of a model built under a prefix
// (nn.NewMLP(g, "mlp", …)) hold its full graph names; LoadWeights reads
// them into the same MLP built elsewhere, as it reads the relative names
// SaveWeights writes. A file of a graph holding more than the module is
// refused with the fix named.
func TestLoadWeightsReadsFullGraphNames(t *testing.T) {
	dir := t.TempDir()
	tr, s := newTrainer(t, train.Config{MaxSteps: 3, CheckpointEvery: 3, Dir: dir})
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	trained := graphBits(s.model.Graph)
	for _, name := range []string{"model.safetensors", "checkpoint.safetensors"} {
		m := regressionMLP(t, 99)
		if err := train.LoadWeights(filepath.Join(dir, name), m); err != nil {
			t.Errorf("%s into nn.NewMLP(g, \"mlp\", …): %v", name, err)
			continue
		}
		if !slices.Equal(bits(t, m), trained) {
			t.Errorf("%s: the trained weights did not load bit for bit", name)
		}
	}
	rel := filepath.Join(dir, "relative.safetensors")
	if err := train.SaveWeights(rel, regressionMLP(t, 5)); err != nil {
		t.Fatal(err)
	}
	m := regressionMLP(t, 99)
	if err := train.LoadWeights(rel, m); err != nil || !slices.Equal(bits(t, m), bits(t, regressionMLP(t, 5))) {
		t.Errorf("relative names: %v", err)
	}

	// Two modules in one graph: a file of both fits neither.
	g, _ := graph.New(tensor.Float64, 1)
	a, _ := nn.NewMLP(g, "a", nn.MLPConfig{In: 2, Hidden: []int{3}, Out: 1})
	if _, err := nn.NewMLP(g, "b", nn.MLPConfig{In: 2, Hidden: []int{3}, Out: 1}); err != nil {
		t.Fatal(err)
	}
	both := filepath.Join(dir, "both.safetensors")
	if err := train.SaveGraphWeights(both, g); err != nil {
		t.Fatal(err)
	}
	err := train.LoadWeights(both, a)
	for _, want := range []string{`unexpected "b.layers.0.weight"`, "train.LoadGraphWeights", "Model.Module"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a file of two modules into one: %v\nwant it to say %s", err, want)
		}
	}
}
