package main

import (
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/safetensors"
)

// newMish is the README's "Train your own model" snippet: Mish,
// x·tanh(softplus(x)), defined from f, f', f” (New checks the derivatives
// against finite differences) and registered by name.
func newMish() (activation.Activation, error) {
	sp, sig := activation.Softplus.F, activation.Softplus.Deriv // log(1+eˣ) and σ(x), accurate in both tails
	mish, err := activation.New(activation.Def{Name: "mish", Title: "Mish",
		F:  func(x float64) float64 { return x * math.Tanh(sp(x)) },
		D1: func(x float64) float64 { c := 1 / math.Cosh(sp(x)); return math.Tanh(sp(x)) + x*sig(x)*c*c },
		D2: func(x float64) float64 {
			t, c, s := math.Tanh(sp(x)), 1/math.Cosh(sp(x)), sig(x)
			return s * c * c * (2 + x*(sig(-x)-2*s*t))
		},
	}) // refused if D1 or D2 disagrees with finite differences of F or D1
	if err != nil {
		return mish, err
	}
	return mish, activation.Register(mish) // now -acts relu,gelu,mish and activation.ParseActivation know it
}

// registeredMish defines and registers Mish once per process (under
// -count=2 a second definition named "mish" would be refused).
var registeredMish = sync.OnceValues(newMish)

// A user-defined activation, once registered, is an -acts name like the
// built-in ones: the tiny configuration trains with Mish, the report and
// the summary name it, and the saved network is the Mish network (its
// test loss recomputed in float64 with Mish's reference).
func TestUserActivationByName(t *testing.T) {
	mish, err := registeredMish()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := []string{"-out", dir, "-acts", "relu,gelu,mish", "-opts", "adam", "-adam-lr", "0.01", "-epochs", "2", "-seeds", "2", "-seed", "3",
		"-train-n", "640", "-test-n", "256", "-val", "128", "-evals-per-epoch", "2", "-layers", "2", "-width", "16", "-batch", "64",
		"-workers", "1", "-quiet", "-dpi", "30"}
	c, err := parseFlags(flag.NewFlagSet("gelu-vs-relu", flag.ContinueOnError), args, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Acts) != 3 || c.Acts[2] != mish {
		t.Fatalf("-acts relu,gelu,mish parsed as %v", c.Acts)
	}
	res, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	sum := extest.CheckOutput(t, dir, "gelu-vs-relu "+strings.Join(args, " "))
	trained := 0
	for _, r := range res.Runs {
		if r.Setting.Act != mish {
			continue
		}
		trained++
		if first, last := r.Curve.Metric("train_loss")[0], r.Curve.Last("train_loss"); r.Diverged != "" || !(last < first) || !(r.Curve.Last("test_loss") < math.Log(10)) {
			t.Errorf("%s: diverged %q, training loss %v → %v, final test loss %v: did not learn", r.Dir, r.Diverged, first, last, r.Curve.Last("test_loss"))
		}
		f, err := safetensors.Load(filepath.Join(r.Dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := loadData(c)
		if err != nil {
			t.Fatal(err)
		}
		loss, _ := forward64(t, f, c.Layers, mish.F, d.Test)
		if want := r.Curve.Last("test_loss"); math.Abs(loss-want) > 1e-4 {
			t.Errorf("%s: test loss recomputed with Mish %.6f, reported %.6f", r.Dir, loss, want)
		}
	}
	if trained != 2 {
		t.Errorf("%d Mish runs, want 2 (one per seed)", trained)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ReLU, GELU and Mish", "| Adam | Mish |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, key := range []string{"adam.mish.final.test_error.median", "compare.adam.mean_train_loss.gelu_vs_mish.lower_seeds", "init_rms.mish.factor"} {
		if _, ok := sum.Values[key]; !ok {
			t.Errorf("summary.json has no %s", key)
		}
	}
}
