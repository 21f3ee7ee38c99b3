package train

// Weights files: a module's state dict, or a whole graph's parameters, as
// safetensors with PyTorch's names, so that torch's load_state_dict reads
// them and this package reads PyTorch's (and nanoGPT's) state dicts.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train/safetensors"
)

// modelArgsKey is the metadata entry holding a model's Args.
const modelArgsKey = "model_args"

// SaveWeights writes m's state dict (nn.StateDict: names relative to m's
// prefix, as PyTorch's m.state_dict() gives them; a tied GPT head as its
// lm_head.weight copy) to path in safetensors format. If m has
// Args() map[string]string (every model of package nn has), they are
// written as the metadata "model_args", a JSON object with sorted keys,
// which LoadWeights checks. opts add entries: nn.CausalMaskBuffers() for
// nanoGPT on torch < 2. In PyTorch:
//
//	model.load_state_dict(safetensors.torch.load_file(path))
func SaveWeights(path string, m nn.Module, opts ...nn.StateDictOption) error {
	if m == nil {
		return fmt.Errorf("train.SaveWeights %s: nil module", path)
	}
	sd, err := nn.StateDict(m, opts...)
	if err != nil {
		return fmt.Errorf("train.SaveWeights %s: %w", path, err)
	}
	meta := map[string]string{"format": "pt"}
	if a, ok := m.(interface{ Args() map[string]string }); ok {
		if meta[modelArgsKey], err = modelArgsJSON(a.Args()); err != nil {
			return fmt.Errorf("train.SaveWeights %s: %w", path, err)
		}
	}
	if err := safetensors.Save(path, sd, meta); err != nil {
		return fmt.Errorf("train.SaveWeights: %w", err)
	}
	return nil
}

// LoadOption changes what LoadWeights accepts.
type LoadOption func(*loadConfig)

type loadConfig struct{ allowArgs bool }

// AllowArgsMismatch loads weights whose file's model_args differ from the
// model's Args (the shapes and names must still match): e.g. a ReLU
// model's weights into a GELU model on purpose.
func AllowArgsMismatch() LoadOption { return func(c *loadConfig) { c.allowArgs = true } }

// LoadWeights sets m's parameters from a safetensors state dict at path:
// one written by SaveWeights, a trainer's checkpoint (its "optimizer."
// entries are ignored) or model file, or a PyTorch or nanoGPT state dict
// saved as
//
//	safetensors.torch.save_file({k: v.clone() for k, v in model.state_dict().items()}, path)
//
// (save_file refuses a state dict whose tensors share memory, as a tied
// GPT's lm_head.weight and transformer.wte.weight do; the copies are
// saved under both names, as this strict load wants). The names may be
// relative to m (PyTorch's m.state_dict(): "layers.0.weight") or m's full
// graph names ("mlp.layers.0.weight" for nn.NewMLP(g, "mlp", …), as a
// trainer's checkpoint and model file hold them): the file is read as
// full names only when every name in it starts with m's prefix and a dot
// and the names as they are do not fit, so the reading is never
// ambiguous. It is strict, as
// PyTorch's load_state_dict(strict=True): every parameter of m
// (nn.NamedParameters) must be present with its shape, and an extra entry
// is accepted only when it is one m's PyTorch counterpart has with the
// values it would hold (a GPT's tied lm_head.weight equal to
// transformer.wte.weight, nanoGPT's causal masks); the error names every
// missing, extra or misshapen entry (nn.CheckStateDict). When the file has
// model_args and m has Args, they must be equal: the error lists every
// difference, and AllowArgsMismatch accepts them. float32 and float64 are
// converted; a value that is not finite after conversion is an error.
// Nothing is changed unless everything checks; after loading,
// graph.MarkParamsChanged tells caches (nn.KVCache) that the weights
// changed.
func LoadWeights(path string, m nn.Module, opts ...LoadOption) error {
	if m == nil {
		return fmt.Errorf("train.LoadWeights %s: nil module", path)
	}
	var c loadConfig
	for i, o := range opts {
		if o == nil {
			return fmt.Errorf("train.LoadWeights %s: option %d is nil", path, i)
		}
		o(&c)
	}
	dst, err := nn.NamedParameters(m)
	if err != nil {
		return fmt.Errorf("train.LoadWeights %s: %w", path, err)
	}
	f, err := safetensors.Load(path)
	if err != nil {
		return fmt.Errorf("train.LoadWeights: %w", err)
	}
	if a, ok := m.(interface{ Args() map[string]string }); ok && !c.allowArgs {
		if err := checkModelArgs(f.Metadata, a.Args()); err != nil {
			return fmt.Errorf("train.LoadWeights %s: %w (train.AllowArgsMismatch() loads anyway)", path, err)
		}
	}
	var sd []graph.NamedTensor
	for _, t := range f.Tensors {
		if !strings.HasPrefix(t.Name, optimizerPrefix) {
			sd = append(sd, t)
		}
	}
	if sd, err = readAsStateDict(m, sd); err != nil {
		return fmt.Errorf("train.LoadWeights %s: %w", path, err)
	}
	// Only the parameters' entries are copied: the extras are checked
	// copies of them or buffers this package computes.
	want := make(map[string]bool, len(dst))
	for _, d := range dst {
		want[d.Name] = true
	}
	params := &safetensors.File{Path: f.Path, Metadata: f.Metadata}
	for _, t := range sd {
		if want[t.Name] {
			params.Tensors = append(params.Tensors, t)
		}
	}
	if err := params.CopyInto(dst); err != nil {
		return fmt.Errorf("train.LoadWeights: %w", err)
	}
	graph.MarkParamsChanged()
	return nil
}

// SaveGraphWeights writes every parameter of g, under its graph name, to
// path in safetensors format (torch: model.load_state_dict(load_file(path))
// for a model whose state dict has those names).
func SaveGraphWeights(path string, g *graph.Graph) error {
	if g == nil {
		return fmt.Errorf("train.SaveGraphWeights %s: nil graph", path)
	}
	return saveModel(path, g.ParamTensors())
}

// readAsStateDict returns the entries sd of a file as m's state dict:
// as they are (names relative to m), or, when that does not fit and every
// name starts with m's prefix and a dot, with the prefix taken off (the
// module's full graph names, as a trainer's checkpoint holds them). The
// two readings cannot both fit: the full names are the relative ones
// lengthened by the prefix. When neither fits, the error is the one of
// the reading the names suggest, with the fix for a file of more than
// the module.
func readAsStateDict(m nn.Module, sd []graph.NamedTensor) ([]graph.NamedTensor, error) {
	err := nn.CheckStateDict(m, sd)
	if err == nil {
		return sd, nil
	}
	pre := ""
	if p, ok := m.(interface{ Prefix() string }); ok {
		pre = p.Prefix()
	}
	full := pre != "" && len(sd) > 0
	for _, e := range sd {
		full = full && strings.HasPrefix(e.Name, pre+".")
	}
	read := sd
	if full {
		read = make([]graph.NamedTensor, len(sd))
		for i, e := range sd {
			read[i] = graph.NamedTensor{Name: strings.TrimPrefix(e.Name, pre+"."), Value: e.Value}
		}
		if err = nn.CheckStateDict(m, read); err == nil {
			return read, nil
		}
	}
	// With every parameter's name in the file, the problem is a shape or
	// an extra entry, which the error names; else it may be the wrong kind
	// of file.
	ps, perr := nn.NamedParameters(m)
	if perr != nil {
		return nil, err
	}
	have := make(map[string]bool, len(read))
	for _, e := range read {
		have[e.Name] = true
	}
	if !slices.ContainsFunc(ps, func(p graph.NamedTensor) bool { return !have[p.Name] }) {
		return nil, err
	}
	how := "names relative to the module"
	if pre != "" {
		how += fmt.Sprintf(", or its full graph names, all starting %q", pre+".")
	}
	return nil, fmt.Errorf("%w (a state dict is read with %s; a file of a whole graph's parameters, as train.SaveGraphWeights and a trainer without Model.Module write, loads with train.LoadGraphWeights; a trainer with Model.Module writes the module's state dict)", err, how)
}

// LoadGraphWeights sets every parameter of g from a safetensors file
// written by SaveGraphWeights, by a checkpoint (its optimizer state is
// ignored) or by PyTorch (saved as LoadWeights shows): names and shapes
// must match and the file may hold nothing else;
// float32 and float64 are converted. The file is validated as
// safetensors.Load does, with its default limits. Nothing is changed
// unless everything checks.
func LoadGraphWeights(path string, g *graph.Graph) error {
	if g == nil {
		return fmt.Errorf("train.LoadGraphWeights %s: nil graph", path)
	}
	f, err := safetensors.Load(path)
	if err != nil {
		return err
	}
	if err := f.CopyInto(g.ParamTensors(), optimizerPrefix); err != nil {
		return err
	}
	graph.MarkParamsChanged()
	return nil
}

// modelArgsJSON encodes a model's Args as the "model_args" metadata: a
// JSON object with sorted keys.
func modelArgsJSON(args map[string]string) (string, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("model_args: %w", err)
	}
	return string(b), nil
}

// checkModelArgs compares the "model_args" of a file's metadata with a
// model's Args and returns an error listing every difference; a file
// without model_args (written by PyTorch, or for a graph) has nothing to
// compare.
func checkModelArgs(meta map[string]string, args map[string]string) error {
	if _, ok := meta[modelArgsKey]; !ok {
		return nil
	}
	diffs, err := modelArgsDiff(meta, args, "file")
	if err != nil || diffs == nil {
		return err
	}
	return fmt.Errorf("the file's model_args differ from the model's Args: %s", strings.Join(diffs, "; "))
}

// modelArgsDiff lists, sorted by key, every difference between the
// "model_args" of a file's metadata (missing: none) and a model's Args,
// calling the file what.
func modelArgsDiff(meta map[string]string, args map[string]string, what string) ([]string, error) {
	var saved map[string]string
	if raw, ok := meta[modelArgsKey]; ok {
		if err := json.Unmarshal([]byte(raw), &saved); err != nil {
			return nil, fmt.Errorf("metadata model_args = %q is not a JSON object of strings: %v", raw, err)
		}
	}
	keys := slices.Sorted(maps.Keys(saved))
	for k := range args {
		if _, ok := saved[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	show := func(m map[string]string, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprintf("%q", v)
		}
		return "(none)"
	}
	var diffs []string
	for _, k := range keys {
		a, inFile := saved[k]
		b, inModel := args[k]
		if inFile != inModel || a != b {
			diffs = append(diffs, fmt.Sprintf("%s: %s %s, model %s", k, what, show(saved, k), show(args, k)))
		}
	}
	return diffs, nil
}
