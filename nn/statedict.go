package nn

import (
	"fmt"
	"strings"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// A state dict is PyTorch's name → tensor mapping of a module: its
// parameters (and buffers) under names relative to the module, in the
// module's order. This file maps modules to and from state dicts;
// train.SaveWeights and train.LoadWeights write and read them as
// safetensors files.

// StateDictOption changes what StateDict returns.
type StateDictOption func(*stateDictConfig)

type stateDictConfig struct {
	masks bool
}

// CausalMaskBuffers adds the causal masks that nanoGPT registers as
// buffers when torch has no scaled_dot_product_attention (torch < 2): a
// GPT's "transformer.h.<i>.attn.bias", ones on and below the diagonal,
// (1, 1, BlockSize, BlockSize). nanoGPT's strict load_state_dict needs
// them on torch 1.x and refuses them on torch ≥ 2. Only a GPT has them.
func CausalMaskBuffers() StateDictOption { return func(c *stateDictConfig) { c.masks = true } }

// stateDictHooks is implemented by the models whose PyTorch state dict
// holds more than their parameters (GPT: the tied head's copy and
// nanoGPT's masks).
type stateDictHooks interface {
	// stateDict returns the state dict, given the parameters' entries.
	stateDict(params []graph.NamedTensor, c stateDictConfig) ([]graph.NamedTensor, error)
	// acceptExtra returns nil if the entry name of sd, which is not a
	// parameter, is one the module's PyTorch counterpart has with the
	// value v; else what is wrong with it.
	acceptExtra(name string, v *tensor.Dense, sd map[string]*tensor.Dense) error
}

// NamedParameters returns m's parameters under names relative to m's
// prefix (PyTorch's m.named_parameters()): for nn.NewGPT(g, "teacher",
// cfg), "transformer.wte.weight" for the parameter named
// "teacher.transformer.wte.weight" in the graph. A tied weight appears
// once. A module without a Prefix method has its parameters' full names.
// The tensors are the parameters themselves.
func NamedParameters(m Module) ([]graph.NamedTensor, error) {
	ps, err := ParamTensors(m)
	if err != nil {
		return nil, err
	}
	pre := ""
	if p, ok := m.(interface{ Prefix() string }); ok {
		pre = p.Prefix()
	}
	if pre == "" {
		return ps, nil
	}
	for i, p := range ps {
		rel, ok := strings.CutPrefix(p.Name, pre+".")
		if !ok {
			return nil, fmt.Errorf("nn: %T %q has a parameter %q outside its prefix", m, pre, p.Name)
		}
		ps[i].Name = rel
	}
	return ps, nil
}

// StateDict returns m's state dict as PyTorch's m.state_dict() gives it:
// NamedParameters, plus for a GPT the entries nanoGPT's state dict has
// besides them (lm_head.weight when tied; the masks with
// CausalMaskBuffers). The tensors are the parameters themselves, not
// copies.
func StateDict(m Module, opts ...StateDictOption) ([]graph.NamedTensor, error) {
	var c stateDictConfig
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("nn.StateDict: option %d is nil", i)
		}
		o(&c)
	}
	ps, err := NamedParameters(m)
	if err != nil {
		return nil, fmt.Errorf("nn.StateDict: %w", err)
	}
	h, ok := m.(stateDictHooks)
	if !ok {
		if c.masks {
			return nil, fmt.Errorf("nn.StateDict: CausalMaskBuffers: a %T has no causal-mask buffers (a GPT has)", m)
		}
		return ps, nil
	}
	return h.stateDict(ps, c)
}

// maxProblems is how many problems CheckStateDict lists before it counts
// the rest.
const maxProblems = 20

// CheckStateDict checks a state dict read from a file against m as
// PyTorch's load_state_dict(strict=True) does, and names every problem:
// each of m's parameters (NamedParameters) must be present once with its
// shape, and every other entry must be one m's PyTorch counterpart has
// with the values it would hold (for a GPT, the tied head's copy equal to
// transformer.wte.weight and nanoGPT's causal masks). It changes nothing.
func CheckStateDict(m Module, sd []graph.NamedTensor) error {
	ps, err := NamedParameters(m)
	if err != nil {
		return fmt.Errorf("nn.CheckStateDict: %w", err)
	}
	have := make(map[string]*tensor.Dense, len(sd))
	var problems []string
	for _, e := range sd {
		if e.Value == nil {
			problems = append(problems, fmt.Sprintf("%q is nil", e.Name))
			continue
		}
		if _, dup := have[e.Name]; dup {
			problems = append(problems, fmt.Sprintf("%q appears twice", e.Name))
		}
		have[e.Name] = e.Value
	}
	want := make(map[string]bool, len(ps))
	for _, p := range ps {
		want[p.Name] = true
		v, ok := have[p.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("missing %q %v", p.Name, p.Value.Shape()))
		case !graph.SameShape(v.Shape(), p.Value.Shape()):
			problems = append(problems, fmt.Sprintf("%q has shape %v, the model's is %v", p.Name, v.Shape(), p.Value.Shape()))
		}
	}
	h, _ := m.(stateDictHooks)
	for _, e := range sd {
		if want[e.Name] || e.Value == nil {
			continue
		}
		why := "the model has no such parameter"
		if h != nil {
			if err := h.acceptExtra(e.Name, e.Value, have); err == nil {
				continue
			} else {
				why = err.Error()
			}
		}
		problems = append(problems, fmt.Sprintf("unexpected %q: %s", e.Name, why))
	}
	if len(problems) == 0 {
		return nil
	}
	if n := len(problems); n > maxProblems {
		problems = append(problems[:maxProblems], fmt.Sprintf("and %d more", n-maxProblems))
	}
	return fmt.Errorf("nn.CheckStateDict: the state dict does not fit the %T: %s", m, strings.Join(problems, "; "))
}

// equalValues compares two tensors element by element as float64 numbers
// (a float32 tensor and its float64 copy are equal) and returns the first
// difference.
func equalValues(a, b *tensor.Dense) (i int, av, bv float64, same bool) {
	x, y := graph.Float64s(a), graph.Float64s(b)
	if len(x) != len(y) {
		return 0, float64(len(x)), float64(len(y)), false
	}
	for i := range x {
		if x[i] != y[i] {
			return i, x[i], y[i], false
		}
	}
	return 0, 0, 0, true
}
