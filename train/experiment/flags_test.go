package experiment

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
)

func TestListFlags(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	lrs, widths, inits, acts := Floats{0.1, 0.3}, Ints{128}, Strings{"default"}, Activations{activation.ReLU}
	fs.Var(&lrs, "lrs", "")
	fs.Var(&widths, "hidden", "")
	fs.Var(&inits, "bias", "")
	fs.Var(&acts, "acts", "")
	if lrs.String() != "0.1,0.3" || acts.String() != "relu" { // the defaults -h shows
		t.Errorf("defaults shown as %q, %q", lrs.String(), acts.String())
	}
	err := fs.Parse([]string{"-lrs", " 1e-3, 0.5,", "-hidden", "64,-2", "-bias", "default,-1", "-acts", "gelu_tanh,elu:0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lrs, Floats{1e-3, 0.5}) || !slices.Equal(widths, Ints{64, -2}) || !slices.Equal(inits, Strings{"default", "-1"}) ||
		len(acts) != 2 || acts[0] != activation.GELUTanh || acts[1].Name() != "elu:0.5" {
		t.Errorf("parsed %v %v %v %v", lrs, widths, inits, acts)
	}
	for _, c := range []struct {
		v          flag.Value
		arg, wants string
	}{
		{&lrs, "0.1,x", `"x" is not a finite number`}, {&lrs, "0.1,NaN", "finite"}, {&lrs, "0.1,1e-1", "twice"},
		{&lrs, " , ", "empty list"}, {&widths, "1.5", "not an integer"}, {&inits, "a,a", "twice"},
		{&acts, "relu,tanh", "unknown activation"}, {&acts, "relu,RELU", "twice"},
	} {
		if err := c.v.Set(c.arg); err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("Set(%q): %v, want an error containing %q", c.arg, err, c.wants)
		}
	}
	if !slices.Equal(lrs, Floats{1e-3, 0.5}) {
		t.Errorf("a failed Set changed the list to %v", lrs)
	}
}
