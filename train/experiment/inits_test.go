package experiment

import (
	"testing"
)

func TestInits(t *testing.T) {
	var f Inits
	if err := f.Set("default, -1,2.5"); err != nil || f.String() != "default,-1,2.5" {
		t.Errorf("Set: %v, %q", err, f.String())
	}
	for _, bad := range []string{"minus one", "-1,-1", "default,x"} {
		if err := (&Inits{}).Set(bad); err == nil {
			t.Errorf("Set(%q): no error", bad)
		}
	}
	if init, err := ParseInit("default"); init != nil || err != nil {
		t.Errorf(`ParseInit("default") = %v, %v; want nil, nil`, init, err)
	}
	// A constant fills every element with its value.
	init, err := ParseInit("-3")
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float64, 4)
	if err := init.Fill(dst, []int{4}, nil); err != nil || dst[0] != -3 || dst[3] != -3 {
		t.Errorf(`ParseInit("-3") fills %v (%v), want −3 everywhere`, dst, err)
	}
	// CheckFlags calls Check on a list set in code.
	cfg := struct {
		Bias Inits `flag:"bias" check:"nonempty"`
	}{Inits{"default", "minus one"}}
	if err := CheckFlags(cfg); err == nil || err.Error() != `-bias: "minus one", want default or a number` {
		t.Errorf("CheckFlags: %v", err)
	}
	cfg.Bias = Inits{"0"}
	if err := CheckFlags(cfg); err != nil {
		t.Errorf("CheckFlags on valid inits: %v", err)
	}
}
