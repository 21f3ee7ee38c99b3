package experiment

import (
	"flag"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
)

func TestBindFlagsParsesIntoTheConfig(t *testing.T) {
	type config struct {
		Batch  int         `flag:"batch" help:"mini-batch size"`
		Seed   uint64      `flag:"seed" help:"seed"`
		LR     float64     `flag:"lr" help:"learning rate"`
		Data   string      `flag:"data" help:"folder"`
		Quiet  bool        `flag:"quiet" help:"say nothing"`
		Hidden Ints        `flag:"hidden" help:"widths"`
		Acts   Activations `flag:"acts" help:"activations"`
		Args   []string    // no tag: not a flag
	}
	c := config{Batch: 64, LR: 0.1, Data: "d", Hidden: Ints{128}, Acts: Activations{activation.ReLU}}
	fs := flag.NewFlagSet("p", flag.ContinueOnError)
	if err := BindFlags(fs, &c); err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup("hidden").DefValue; got != "128" {
		t.Errorf("-hidden default %q, want 128", got)
	}
	if got := fs.Lookup("batch").Usage; got != "mini-batch size" {
		t.Errorf("-batch usage %q", got)
	}
	if err := fs.Parse([]string{"-batch", "16", "-seed", "7", "-lr", "2.5e-3", "-quiet", "-hidden", "8,4", "-acts", "gelu,silu"}); err != nil {
		t.Fatal(err)
	}
	want := config{Batch: 16, Seed: 7, LR: 2.5e-3, Data: "d", Quiet: true, Hidden: Ints{8, 4}, Acts: Activations{activation.GELU, activation.SiLU}}
	if c.Batch != want.Batch || c.Seed != want.Seed || c.LR != want.LR || c.Data != want.Data || !c.Quiet ||
		c.Hidden.String() != want.Hidden.String() || c.Acts.String() != want.Acts.String() {
		t.Errorf("parsed %+v, want %+v", c, want)
	}
}

func TestBindFlagsErrors(t *testing.T) {
	var n int
	for _, tc := range []struct {
		cfg  any
		want string
	}{
		{&n, "pointer to a struct"},
		{struct{}{}, "pointer to a struct"},
		{&struct {
			X int `flag:"x"`
		}{}, "field X"},
		{&struct {
			X int32 `flag:"x" help:"h"`
		}{}, "type int32"},
		{(*struct{})(nil), "non-nil pointer"},
		{&struct {
			A int `flag:"a" help:"h"`
			B int `flag:"a" help:"h"`
		}{}, "flag -a is already defined"},
		{&struct {
			Taken int `flag:"taken" help:"h"`
		}{}, "flag -taken is already defined"},
		// A valid field before a bad one: nothing may be defined.
		{&struct {
			Good int   `flag:"good" help:"h"`
			Bad  int32 `flag:"bad" help:"h"`
		}{}, "type int32"},
	} {
		fs := flag.NewFlagSet("p", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("taken", 0, "defined before BindFlags")
		if err := BindFlags(fs, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T: %v, want an error mentioning %q", tc.cfg, err, tc.want)
		}
		if fs.Lookup("good") != nil || fs.Lookup("a") != nil {
			t.Errorf("%T: a failed BindFlags defined flags", tc.cfg)
		}
	}
	if err := BindFlags(nil, &struct{}{}); err == nil || !strings.Contains(err.Error(), "nil flag set") {
		t.Errorf("nil flag set: %v", err)
	}
}

func TestCheckFlags(t *testing.T) {
	type config struct {
		Batch int     `flag:"batch" help:"h" check:"min=1"`
		Tol   float64 `flag:"tol" help:"h" check:"min=0,below=1"`
		LRs   Floats  `flag:"lrs" help:"h" check:"nonempty,positive"`
		Free  int     `flag:"free" help:"h"`
		Other int     `check:"positive"` // no flag: not checked
	}
	good := config{Batch: 1, Tol: 0, LRs: Floats{0.1}, Free: -5, Other: -1}
	if err := CheckFlags(good); err != nil {
		t.Errorf("good config: %v", err)
	}
	bad := config{Batch: 0, Tol: math.NaN(), LRs: Floats{0.1, -1}}
	err := CheckFlags(&bad)
	for _, want := range []string{"-batch 0: want ≥ 1", "-tol NaN: want ≥ 0", "-tol NaN: want < 1", "-lrs [0.1 -1]: want every value > 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad config: %v, want it to say %q", err, want)
		}
	}
	if err := CheckFlags(config{Batch: 1, LRs: nil}); err == nil || !strings.Contains(err.Error(), "-lrs []: want a non-empty list") {
		t.Errorf("empty list: %v", err)
	}
	if err := CheckFlags(&struct {
		S string `flag:"s" help:"h" check:"positive"`
	}{}); err == nil || !strings.Contains(err.Error(), "want numbers") {
		t.Errorf("rule on a string: %v", err)
	}
	if err := CheckFlags(&struct {
		N int `flag:"n" help:"h" check:"huge"`
	}{}); err == nil || !strings.Contains(err.Error(), `rule "huge"`) {
		t.Errorf("unknown rule: %v", err)
	}
}

// An embedded group of flags is bound and checked like the config's own.
func TestBindFlagsEmbedded(t *testing.T) {
	type config struct {
		MNISTMLP
		Flags     // no flag tags inside: nothing to bind or check
		Steps int `flag:"steps" help:"h" check:"positive"`
	}
	c := config{MNISTMLP: MNISTMLP{Hidden: Ints{128}, Batch: 64, Acts: Activations{activation.ReLU}}, Steps: 10}
	fs := flag.NewFlagSet("p", flag.ContinueOnError)
	if err := BindFlags(fs, &c); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"-hidden", "8,0", "-batch", "16", "-steps", "0"}); err != nil {
		t.Fatal(err)
	}
	if c.Batch != 16 || c.Hidden.String() != "8,0" {
		t.Errorf("parsed batch %d hidden %v", c.Batch, c.Hidden)
	}
	err := CheckFlags(c)
	for _, want := range []string{"-hidden [8 0]: want every value > 0", "-steps 0: want > 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckFlags: %v, want it to say %q", err, want)
		}
	}
}

func TestMainParsing(t *testing.T) {
	type config struct {
		Flags
		Steps int `flag:"steps" help:"h"`
	}
	c := config{Flags: Flags{Out: "out/x", Seed: 1}, Steps: 600}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := parseFlags(fs, []string{"-steps", "20", "-train-n", "100", "-out", "o"}, &c.Flags, SubsetFlag, &c); err != nil {
		t.Fatal(err)
	}
	if c.Steps != 20 || c.TrainN != 100 || c.Out != "o" || c.Seed != 1 {
		t.Errorf("parsed %+v", c)
	}
	if err := parseFlags(flag.NewFlagSet("y", flag.ContinueOnError), nil, &c.Flags, 0, c); err == nil {
		t.Error("a config that is not a pointer: no error")
	}
}
