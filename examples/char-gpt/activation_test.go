package main

import (
	"context"
	"flag"
	"io"
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

// registeredMish defines Mish, x·tanh(softplus(x)), from f, f', f”
// (activation.New checks the derivatives against finite differences) and
// registers it by name, once per process (under -count=2 a second
// definition named "mish" would be refused).
var registeredMish = sync.OnceValues(func() (activation.Activation, error) {
	sp, sig := activation.Softplus.F, activation.Softplus.Deriv
	mish, err := activation.New(activation.Def{Name: "mish", Title: "Mish",
		F:  func(x float64) float64 { return x * math.Tanh(sp(x)) },
		D1: func(x float64) float64 { c := 1 / math.Cosh(sp(x)); return math.Tanh(sp(x)) + x*sig(x)*c*c },
		D2: func(x float64) float64 {
			t, c, s := math.Tanh(sp(x)), 1/math.Cosh(sp(x)), sig(x)
			return s * c * c * (2 + x*(sig(-x)-2*s*t))
		},
	})
	if err != nil {
		return mish, err
	}
	return mish, activation.Register(mish)
})

// A registered activation is an -mlp name like the built-in variants: the
// tiny configuration trains an ungated Mish MLP beside GELU, its loss
// falls, the report and the summary name it, and its saved model's
// model_args say it is Mish.
func TestUserActivationAsMLP(t *testing.T) {
	if _, err := registeredMish(); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("char-gpt", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	args := []string{"-out", t.TempDir(), "-text", tinyText(t), "-mlp", "gelu,mish", "-lrs", "0.01", "-seeds", "1", "-workers", "1", "-quiet",
		"-T", "8", "-d-model", "16", "-heads", "2", "-blocks", "1", "-ff", "48", "-batch", "16", "-steps", "30", "-eval-every", "10", "-warmup", "5",
		"-val-chars", "1024", "-sample", "20", "-dpi", "30"}
	c, err := parseFlags(fs, args, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	sum := extest.CheckOutput(t, c.Out, "char-gpt "+strings.Join(args, " "))
	r := res.Runs[1]
	if val := r.Curve.Metric("val_loss"); r.Setting.MLP != "mish" || !(val[len(val)-1] < val[0]-0.5) {
		t.Errorf("run %s: validation loss %v, want Mish's to fall by more than 0.5", r.Name, val)
	}
	if _, ok := sum.Values["mish.final_val_loss"]; !ok {
		t.Errorf("summary.json has no mish.final_val_loss")
	}
	md, _ := os.ReadFile(filepath.Join(c.Out, "report.md"))
	if !strings.Contains(string(md), "| mish | act(x·W1)·W2 | mish | 48 |") || !strings.Contains(string(md), "**mish**") {
		t.Errorf("report.md has no Mish row in the parameters table or no Mish sample")
	}
	f, err := safetensors.Load(filepath.Join(r.Dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if args := f.Metadata["model_args"]; !strings.Contains(args, `"mish"`) {
		t.Errorf("model_args %s do not name Mish", args)
	}
}
