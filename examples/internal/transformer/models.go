package transformer

// The feed-forward variants by name (and any activation as an ungated
// MLP), nn.ViT wrapped as a train.Model, and nanoGPT's AdamW recipe
// trained as one run of a grid.

import (
	"context"
	"fmt"
	"github.com/geluproject/gelu/train/experiment"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// MLP is the feed-forward layer of a Transformer block: act(x·W1)·W2, or
// with a Gate (Shazeer 2020) (act(x·W1) ⊙ x·V)·W2.
type MLP struct {
	Act  activation.Activation // the ungated MLP's, or the gate's
	Gate nn.Gate               // zero: ungated
}

// MLPs are the variants by name (the examples' -mlp), the gated ones with
// the activation of their gate.
var MLPs = map[string]MLP{
	"relu": {Act: activation.ReLU}, "gelu": {Act: activation.GELU}, "gelu_tanh": {Act: activation.GELUTanh}, "silu": {Act: activation.SiLU},
	"geglu": {activation.GELU, nn.GEGLU}, "swiglu": {activation.SiLU, nn.SwiGLU}, "reglu": {activation.ReLU, nn.ReGLU},
}

// MLPNames lists the names of MLPs, sorted: "geglu, gelu, …".
func MLPNames() string { return strings.Join(slices.Sorted(maps.Keys(MLPs)), ", ") }

// ParseMLP returns the variant of MLPs with this name, or else the
// ungated MLP of the activation activation.ParseActivation finds by this
// name: any built-in one ("elu", "sigmoid_gated:1.702") or one a program
// added with activation.Register.
func ParseMLP(name string) (MLP, error) {
	if m, ok := MLPs[name]; ok {
		return m, nil
	}
	a, err := activation.ParseActivation(name)
	if err != nil {
		return MLP{}, fmt.Errorf("MLP %q: not one of the variants %s, nor an activation (%w)", name, MLPNames(), err)
	}
	return MLP{Act: a}, nil
}

// Gated reports whether the MLP has a second input projection.
func (m MLP) Gated() bool { return !m.Gate.IsZero() }

// Hidden is the inner width of the MLP standing for an ungated one of
// inner width ff: ff itself, or nn.GatedHidden(ff), 2/3 of it, for a gated
// one, whose three matrices then hold as many weights as the ungated two.
func (m MLP) Hidden(ff int) int {
	if m.Gated() {
		return nn.GatedHidden(ff)
	}
	return ff
}

// Block returns the fields Hidden, Activation and Gate of an
// nn.BlockConfig, GPTConfig or ViTConfig for this MLP at ungated width ff.
func (m MLP) Block(ff int) (hidden int, act activation.Activation, gate nn.Gate) {
	if m.Gated() {
		return m.Hidden(ff), activation.Activation{}, m.Gate
	}
	return ff, m.Act, m.Gate
}

// Form is the MLP's formula, for a table.
func (m MLP) Form() string {
	if m.Gated() {
		return "(act(x·W1) ⊙ x·V)·W2"
	}
	return "act(x·W1)·W2"
}

// ViTModel adds nn.ViT (cfg) to a new float32 graph seeded by seed, for
// batches of rows images x (rows × ImageSize², row-major pixels) and
// labels y (rows): the class logits, trained by cross-entropy.
func ViTModel(cfg nn.ViTConfig, rows int, seed uint64) (train.Model, error) {
	var m train.Model
	g, err := graph.New(tensor.Float32, seed)
	if err != nil {
		return m, err
	}
	x, err := g.Input("x", rows, cfg.ImageSize*cfg.ImageSize)
	if err != nil {
		return m, err
	}
	y, err := g.Input("y", rows)
	if err != nil {
		return m, err
	}
	v, err := nn.NewViT(g, "", cfg)
	if err != nil {
		return m, err
	}
	logits, err := v.Forward(x)
	if err != nil {
		return m, err
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	if err != nil {
		return m, err
	}
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Task: train.Classification}, nil
}

// AdamW is nanoGPT's training recipe: AdamW (PyTorch's defaults, weight
// decay 0.01) at learning rate LR after Warmup steps of linear warmup,
// cosine decay to LR/10 at Steps, the gradient norm clipped to Clip (0:
// off), Batch examples a step, evaluated at step 0 and every EvalEvery
// steps.
type AdamW struct {
	Batch, Steps, EvalEvery, Warmup int
	LR, Clip                        float64
}

// TrainAdamW trains m by the recipe a as run r of a grid: on trainSet,
// shuffled by r.Seed, in whole batches; evaluated on evalSet, each
// evaluation passed to onEval (to record in r.Curve); the trainer's files
// in r.Dir; its progress bar on progress, none if nil. A run that
// diverges is recorded in r.Diverged, not returned (TrainCosine). It
// returns the trainer, for a final evaluation when r.Diverged is "".
func TrainAdamW[S any](ctx context.Context, r *experiment.Run[S], m train.Model, trainSet, evalSet *datasets.Dataset, a AdamW, progress io.Writer,
	onEval func(train.EvalInfo) error) (*train.Trainer, error) {
	c := Cosine{Batch: a.Batch, Steps: a.Steps, EvalEvery: a.EvalEvery, Warmup: a.Warmup, LR: a.LR, Floor: a.LR / 10, Clip: a.Clip}
	return TrainCosine(ctx, r, m, optim.NewAdamW(a.LR), trainSet, evalSet, c, train.Config{
		Quiet: progress == nil, Progress: progress,
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error { return onEval(e) }})
}

// WriteMLPTable adds to r the table name (name.csv and markdown) of the
// MLP variants mlps at ungated inner width ff: the name, formula,
// activation, inner width and the parameters of the model that model
// builds with it (graph.Graph.NumParams), the last also as the summary value
// <mlp>.params.
func WriteMLPTable(r *report.Report, name string, mlps []string, ff int, model func(mlp string) (train.Model, error)) error {
	var rows [][]any
	for _, m := range mlps {
		tm, err := model(m)
		if err != nil {
			return err
		}
		mlp, err := ParseMLP(m)
		if err != nil {
			return err
		}
		n := tm.Graph.NumParams()
		rows = append(rows, []any{m, mlp.Form(), mlp.Act.Name(), mlp.Hidden(ff), n})
		r.Set(m+".params", n)
	}
	return r.Table(name, []string{"MLP", "form", "activation", "inner width", "parameters"}, rows)
}

// Continue returns n tokens sampled from the trained m after prompt: an
// inference copy of m (GPT.NextToken) drawn from by nn.Generate with a
// sampler of cfg.
func Continue(m *nn.GPT, prompt []int, n int, cfg nn.SampleConfig) ([]int, error) {
	next, err := m.NextToken()
	if err != nil {
		return nil, err
	}
	sampler, err := nn.NewSampler(cfg)
	if err != nil {
		return nil, err
	}
	text, err := nn.Generate(next, prompt, n, sampler)
	if err != nil {
		return nil, err
	}
	return text[len(prompt):], nil
}
