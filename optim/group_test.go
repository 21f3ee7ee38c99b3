package optim_test

// Parameter groups against PyTorch (testdata/gen_torch_fixture.py's group
// cases and nanoGPT's optimizer step), and every way a grouping can be
// wrong.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

type groupFixture struct {
	GroupCases []struct {
		Name      string
		Dtype     string
		Optimizer string
		Defaults  map[string]any
		Groups    []map[string]any
		Warmup    int
		Total     int
		Shapes    map[string][]int
		Params    map[string]any
		Grads     []map[string]any
		LRs       [][]float64 `json:"lrs"`
		After     []map[string]any
		State     map[string]any
	} `json:"group_cases"`
	NanoGPT []struct {
		Dtype       string
		LR          float64 `json:"lr"`
		WeightDecay float64 `json:"weight_decay"`
		Decay       []string
		NoDecay     []string `json:"nodecay"`
		Names       []string
		Shapes      map[string][]int
		Params      map[string]any
		Grads       []map[string]any
		LRs         []float64 `json:"lrs"`
		Norms       []float64
		After       []map[string]any
		State       map[string]any
	} `json:"nanogpt"`
}

func loadGroupFixture(t *testing.T) *groupFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/torch_optim.json")
	if err != nil {
		t.Fatal(err)
	}
	var f groupFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.GroupCases) == 0 || len(f.NanoGPT) == 0 {
		t.Fatal("fixture has no group cases")
	}
	return &f
}

// groupOptions translates a PyTorch param_group's keys into Options; lr
// becomes the scale of the optimizer's rate L.
func groupOptions(t *testing.T, g map[string]any, L float64) []optim.Option {
	var opts []optim.Option
	for k, v := range g {
		switch k {
		case "params":
		case "lr":
			opts = append(opts, optim.LRScale(v.(float64)/L))
		case "weight_decay":
			opts = append(opts, optim.WeightDecay(v.(float64)))
		case "momentum":
			opts = append(opts, optim.Momentum(v.(float64)))
		case "dampening":
			opts = append(opts, optim.Dampening(v.(float64)))
		case "nesterov":
			opts = append(opts, optim.Nesterov(v.(bool)))
		case "maximize":
			opts = append(opts, optim.Maximize(v.(bool)))
		case "amsgrad":
			opts = append(opts, optim.AMSGrad(v.(bool)))
		case "eps":
			opts = append(opts, optim.Eps(v.(float64)))
		case "betas":
			b := v.([]any)
			opts = append(opts, optim.Betas(b[0].(float64), b[1].(float64)))
		default:
			t.Fatalf("param_group key %q has no Option", k)
		}
	}
	return opts
}

func namesOf(v any) []string {
	var out []string
	for _, n := range v.([]any) {
		out = append(out, n.(string))
	}
	return out
}

func fixtureDtype(s string) (tensor.Dtype, tol) {
	if s == "float32" {
		return tensor.Float32, tol{abs: 1e-6, rel: 1e-5}
	}
	return tensor.Float64, tol{abs: 1e-15, rel: 1e-12}
}

// Two and three groups with their own lr, weight decay, betas, eps,
// AMSGrad, momentum, Nesterov and maximize, under LambdaLR, with some
// gradients None: PyTorch's parameters after every step and its final
// state (whose keys differ per group: AMSGrad's maximum, SGD's buffer only
// where momentum ≠ 0).
func TestGroupsMatchPyTorch(t *testing.T) {
	f := loadGroupFixture(t)
	names := []string{"fc.weight", "fc.bias", "ln.weight", "emb.weight"}
	for _, c := range f.GroupCases {
		dt, tl := fixtureDtype(c.Dtype)
		t.Run(c.Name+"/"+c.Dtype, func(t *testing.T) {
			L := c.Defaults["lr"].(float64)
			var groups []optim.Group
			for _, g := range c.Groups {
				groups = append(groups, optim.NewGroup(namesOf(g["params"]), groupOptions(t, g, L)...))
			}
			var o optim.Optimizer
			switch c.Optimizer {
			case "SGD":
				s := &optim.SGD{Groups: groups}
				s.Momentum, s.Dampening, s.WeightDecay = opt(c.Defaults, "momentum", 0), opt(c.Defaults, "dampening", 0), opt(c.Defaults, "weight_decay", 0)
				o = s
			case "Adam", "AdamW":
				a := optim.NewAdam(0)
				if c.Optimizer == "AdamW" {
					a = optim.NewAdamW(0)
				}
				a.WeightDecay = opt(c.Defaults, "weight_decay", a.WeightDecay)
				if b, ok := c.Defaults["betas"].([]any); ok {
					a.Beta1, a.Beta2 = b[0].(float64), b[1].(float64)
				}
				a.Groups = groups
				o = a
			default:
				t.Fatalf("optimizer %q", c.Optimizer)
			}
			cos, err := optim.Cosine(L, c.Total, 0)
			if err != nil {
				t.Fatal(err)
			}
			sched, err := optim.Warmup(cos, c.Warmup)
			if err != nil {
				t.Fatal(err)
			}
			params := make([]graph.NamedTensor, len(names))
			for i, n := range names {
				params[i] = graph.NamedTensor{Name: n, Value: dense(dt, c.Shapes[n], flat(c.Params[n]))}
			}
			for step := range c.After {
				o.SetLR(sched.LR(step))
				// LambdaLR's rate for each group is LR() times the group's scale.
				for gi, g := range c.Groups {
					k := 1.0
					if lr, ok := g["lr"].(float64); ok {
						k = lr / L
					}
					if got, want := o.LR()*k, c.LRs[step][gi]; math.Abs(got-want) > 1e-15*want {
						t.Fatalf("step %d group %d: rate %.17g, LambdaLR's %.17g", step, gi, got, want)
					}
				}
				grads := make([]*tensor.Dense, len(names))
				for i, n := range names {
					if g := c.Grads[step][n]; g != nil {
						grads[i] = dense(dt, c.Shapes[n], flat(g))
					}
				}
				if err := o.Step(params, grads); err != nil {
					t.Fatal(err)
				}
				for i, n := range names {
					mustClose(t, fmt.Sprintf("%s after step %d", n, step), graph.Float64s(params[i].Value), flat(c.After[step][n]), tl)
				}
			}
			compareState(t, o.State(), c.State, tl)
		})
	}
}

func compareState(t *testing.T, st []graph.NamedTensor, want map[string]any, tl tol) {
	t.Helper()
	got := map[string][]float64{}
	for _, nt := range st {
		got[nt.Name] = graph.Float64s(nt.Value)
	}
	if len(got) != len(want) {
		t.Fatalf("state has keys %v, PyTorch's %d", keys(got), len(want))
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Fatalf("state lacks PyTorch's key %q (have %v)", k, keys(got))
		}
		mustClose(t, "state "+k, g, flat(v), tl)
	}
}

// nanoGPT's optimizer step, as its train.py takes it: NanoGPTAdamW's
// groups and betas, every group's lr set to get_lr(it), the gradient norm
// clipped to 1.0, then the step.
func TestNanoGPTAdamWMatchesPyTorch(t *testing.T) {
	f := loadGroupFixture(t)
	for _, c := range f.NanoGPT {
		dt, tl := fixtureDtype(c.Dtype)
		t.Run(c.Dtype, func(t *testing.T) {
			params := make([]graph.NamedTensor, len(c.Names))
			for i, n := range c.Names {
				params[i] = graph.NamedTensor{Name: n, Value: dense(dt, c.Shapes[n], flat(c.Params[n]))}
			}
			o := optim.NanoGPTAdamW(params, c.LR, c.WeightDecay)
			if got := o.Groups; len(got) != 2 || !slices.Equal(got[0].Params, c.Decay) || !slices.Equal(got[1].Params, c.NoDecay) {
				t.Fatalf("groups %v, PyTorch's decay %v and no decay %v", got, c.Decay, c.NoDecay)
			}
			normTol := 1e-13
			if dt == tensor.Float32 {
				normTol = 1e-6 // PyTorch sums float32 squares in float32
			}
			for it := range c.After {
				o.SetLR(c.LRs[it])
				grads := make([]*tensor.Dense, len(c.Names))
				for i, n := range c.Names {
					grads[i] = dense(dt, c.Shapes[n], flat(c.Grads[it][n]))
				}
				norm, err := optim.ClipGradNorm(grads, 1.0)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(norm-c.Norms[it]) > normTol*c.Norms[it] {
					t.Fatalf("iteration %d: norm %.17g, PyTorch %.17g", it, norm, c.Norms[it])
				}
				if err := o.Step(params, grads); err != nil {
					t.Fatal(err)
				}
				for i, n := range c.Names {
					mustClose(t, fmt.Sprintf("%s after iteration %d", n, it), graph.Float64s(params[i].Value), flat(c.After[it][n]), tl)
				}
			}
			compareState(t, o.State(), c.State, tl)
		})
	}
}

// DecayGroups on a GPT's parameters, checked against nanoGPT's own words
// for its rule ("all weight tensors in matmuls + embeddings decay, all
// biases and layernorms don't") applied by name, not by shape.
func TestDecayGroupsSplitLikeNanoGPT(t *testing.T) {
	var params []graph.NamedTensor
	add := func(name string, shape ...int) {
		params = append(params, graph.NamedTensor{Name: name, Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(shape...))})
	}
	add("transformer.wte.weight", 11, 8)
	add("transformer.wpe.weight", 5, 8)
	for l := range 2 {
		h := fmt.Sprintf("transformer.h.%d.", l)
		add(h+"ln_1.weight", 8)
		add(h+"ln_1.bias", 8)
		add(h+"attn.c_attn.weight", 24, 8)
		add(h+"attn.c_attn.bias", 24)
		add(h+"attn.c_proj.weight", 8, 8)
		add(h+"attn.c_proj.bias", 8)
		add(h+"ln_2.weight", 8)
		add(h+"mlp.c_fc.weight", 32, 8)
		add(h+"mlp.c_proj.weight", 8, 32)
	}
	add("transformer.ln_f.weight", 8)
	var wantDecay, wantNo []string
	for _, p := range params {
		if strings.HasSuffix(p.Name, ".bias") || strings.Contains(p.Name, "ln_") {
			wantNo = append(wantNo, p.Name)
		} else {
			wantDecay = append(wantDecay, p.Name)
		}
	}
	groups := optim.DecayGroups(params, 0.1)
	if len(groups) != 2 || !slices.Equal(groups[0].Params, wantDecay) || !slices.Equal(groups[1].Params, wantNo) {
		t.Fatalf("groups\n%v\nwant decay %v\nand none for %v", groups, wantDecay, wantNo)
	}
	if fmt.Sprint(groups[0].Options, groups[1].Options) != "[weight_decay=0.1] [weight_decay=0]" {
		t.Fatalf("options %v and %v", groups[0].Options, groups[1].Options)
	}
	a := optim.NanoGPTAdamW(params, 6e-4, 0.1)
	if !a.Decoupled || a.Beta1 != 0.9 || a.Beta2 != 0.95 || a.Eps != 1e-8 || a.LR() != 6e-4 {
		t.Fatalf("NanoGPTAdamW: %+v, want AdamW at lr 6e-4 with betas (0.9, 0.95) and eps 1e-8", a)
	}
}

// A grouping that does not cover the parameters exactly once, or an option
// the optimizer does not have, is an error naming it, before anything is
// written; so is a group's invalid value, naming the group.
func TestGroupErrors(t *testing.T) {
	p3 := func() []graph.NamedTensor {
		return []graph.NamedTensor{
			{Name: "a", Value: dense(tensor.Float64, []int{2}, []float64{1, 2})},
			{Name: "b", Value: dense(tensor.Float64, []int{2}, []float64{3, 4})},
			{Name: "c", Value: dense(tensor.Float64, []int{1}, []float64{5})},
		}
	}
	g := optim.NewGroup
	sgd := func(groups ...optim.Group) optim.Optimizer {
		return &optim.SGD{LearningRate: 0.1, Momentum: 0.9, Groups: groups}
	}
	adamw := func(groups ...optim.Group) optim.Optimizer {
		a := optim.NewAdamW(0.1)
		a.Groups = groups
		return a
	}
	cases := []struct {
		name string
		o    optim.Optimizer
		want []string
	}{
		{"in two groups", sgd(g([]string{"a", "b"}), g([]string{"b", "c"})), []string{`"b"`, "groups 0 and 1"}},
		{"twice in one group", adamw(g([]string{"a", "b", "a"}), g([]string{"c"})), []string{`"a"`, "twice", "group 0"}},
		{"in none", adamw(g([]string{"a"}), g([]string{"c"})), []string{`"b"`, "none of the 2 groups"}},
		{"unknown name", sgd(g([]string{"a", "b", "c", "d"})), []string{`"d"`, "not among the 3 parameters"}},
		{"adam option on sgd", sgd(g([]string{"a", "b", "c"}, optim.Betas(0.9, 0.95))), []string{"optim.SGD group 0", "betas=(0.9, 0.95)", "lr_scale, weight_decay, momentum"}},
		{"sgd option on adam", adamw(g([]string{"a", "b"}), g([]string{"c"}, optim.Nesterov(true))), []string{"optim.AdamW group 1", "nesterov=true"}},
		{"zero option", sgd(g([]string{"a", "b", "c"}, optim.Option{})), []string{"optim.SGD group 0: a zero Option"}},
		{"option twice", adamw(g([]string{"a", "b", "c"}, optim.WeightDecay(0), optim.WeightDecay(0.1))), []string{"weight_decay is set twice"}},
		{"negative scale", sgd(g([]string{"a", "b", "c"}, optim.LRScale(-1))), []string{"group 0", "lr_scale -1"}},
		{"NaN scale", adamw(g([]string{"a"}), g([]string{"b", "c"}, optim.LRScale(math.NaN()))), []string{"group 1", "lr_scale NaN"}},
		{"bad beta in group", adamw(g([]string{"a"}), g([]string{"b", "c"}, optim.Betas(0.9, 1))), []string{"optim.AdamW group 1: beta2 1"}},
		{"bad eps in group", adamw(g([]string{"a"}), g([]string{"b", "c"}, optim.Eps(0))), []string{"group 1: eps 0"}},
		{"nesterov without momentum", sgd(g([]string{"a"}), g([]string{"b", "c"}, optim.Nesterov(true), optim.Momentum(0))), []string{"optim.SGD group 1: Nesterov"}},
		{"decay too large for the group's rate", adamw(g([]string{"a", "b"}), g([]string{"c"}, optim.LRScale(100), optim.WeightDecay(0.5))), []string{"group 1", "flip"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := p3()
			before := cloneParams(p)
			grads := []*tensor.Dense{dense(tensor.Float64, []int{2}, []float64{1, 1}), nil, dense(tensor.Float64, []int{1}, []float64{1})}
			err := c.o.Step(p, grads)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			for i := range p {
				if !equalBits(graph.Float64s(p[i].Value), graph.Float64s(before[i].Value)) {
					t.Fatalf("%s changed", p[i].Name)
				}
			}
			if st := c.o.State(); len(st) != 0 {
				t.Fatalf("failed step made state %s", names(st))
			}
			// LoadState checks the same before it changes anything.
			if err := c.o.LoadState(p, nil); err == nil {
				t.Fatal("LoadState accepted the grouping")
			}
		})
	}
}

// A group's options override only what they set: the others follow the
// optimizer's fields as they are at each Step. The reference is two plain
// SGDs, one per setting (momentum 0 before the change leaves no state to
// carry over).
func TestGroupFollowsTheFieldsItDoesNotSet(t *testing.T) {
	for _, dt := range dtypes {
		p := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{3}, []float64{1, -2, 3})}}
		grouped := &optim.SGD{LearningRate: 0.1, Groups: []optim.Group{optim.NewGroup([]string{"w"}, optim.WeightDecay(0.5))}}
		q := cloneParams(p)
		var plain optim.Optimizer = &optim.SGD{LearningRate: 0.1, WeightDecay: 0.5}
		for s := range 4 {
			if s == 2 { // a schedule's SetLR and a changed field reach the group
				grouped.SetLR(0.03)
				grouped.Momentum = 0.9
				plain = &optim.SGD{LearningRate: 0.03, WeightDecay: 0.5, Momentum: 0.9}
			}
			g := dense(dt, []int{3}, randn(fmt.Sprint("follow", s), 3, 1))
			if err := grouped.Step(p, []*tensor.Dense{g}); err != nil {
				t.Fatal(err)
			}
			if err := plain.Step(q, []*tensor.Dense{g}); err != nil {
				t.Fatal(err)
			}
		}
		if !equalBits(graph.Float64s(p[0].Value), graph.Float64s(q[0].Value)) {
			t.Fatalf("%v: grouped %v, plain %v", dt, graph.Float64s(p[0].Value), graph.Float64s(q[0].Value))
		}
	}
}

// The state of a grouped optimizer loads into another with the same
// groups; a state with an AMSGrad key for a parameter whose group does not
// use AMSGrad, or a corrupt entry, is rejected and changes nothing.
func TestGroupedLoadState(t *testing.T) {
	dt := tensor.Float64
	newOpt := stateful["adamw-groups"]
	p := testParams(dt)
	a := newOpt(p)
	for s := range 3 {
		if err := a.Step(p, testGrads(dt, s)); err != nil {
			t.Fatal(err)
		}
	}
	saved := deepCopyState(a.State())
	// enc.weight is in group 0 (no AMSGrad), enc.bias in group 1 (AMSGrad).
	if got := names(saved); got != "enc.weight.step enc.weight.exp_avg enc.weight.exp_avg_sq enc.bias.step enc.bias.exp_avg enc.bias.exp_avg_sq enc.bias.max_exp_avg_sq" {
		t.Fatalf("state %q", got)
	}
	b := newOpt(p)
	if err := b.Step(p[:2], testGrads(dt, 9)[:2]); err == nil || !strings.Contains(err.Error(), `"frozen"`) {
		t.Fatalf("a Step without a grouped parameter: %v", err)
	}
	if err := b.Step(p, testGrads(dt, 9)); err != nil {
		t.Fatal(err)
	}
	before := deepCopyState(b.State())
	bad := []struct {
		name  string
		state []graph.NamedTensor
		want  string
	}{
		{"amsgrad key in a group without", append(deepCopyState(saved), graph.NamedTensor{Name: "enc.weight.max_exp_avg_sq", Value: dense(dt, []int{4, 3}, make([]float64, 12))}),
			`"enc.weight.max_exp_avg_sq" is not used with the settings of "enc.weight" (keys [step exp_avg exp_avg_sq])`},
		{"amsgrad key missing", slices.DeleteFunc(deepCopyState(saved), func(nt graph.NamedTensor) bool { return nt.Name == "enc.bias.max_exp_avg_sq" }),
			`"enc.bias" has state [step exp_avg exp_avg_sq] but [enc.bias.max_exp_avg_sq] is missing`},
		{"corrupt last entry", func() []graph.NamedTensor {
			st := deepCopyState(saved)
			st[len(st)-1].Value.Float64s()[2] = -1
			return st
		}(), `"enc.bias.max_exp_avg_sq": element 2`},
	}
	for _, c := range bad {
		err := b.LoadState(p, c.state)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: got %v, want an error containing %s", c.name, err, c.want)
		}
		after := b.State()
		if names(after) != names(before) {
			t.Fatalf("%s: failed load changed the state's keys", c.name)
		}
		for i := range after {
			if !equalBits(graph.Float64s(after[i].Value), graph.Float64s(before[i].Value)) {
				t.Fatalf("%s: failed load changed %s", c.name, after[i].Name)
			}
		}
	}
	if err := b.LoadState(p, saved); err != nil {
		t.Fatal(err)
	}
	if names(b.State()) != names(saved) {
		t.Fatal("loaded state differs")
	}
}
