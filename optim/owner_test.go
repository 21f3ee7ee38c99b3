package optim_test

import (
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// Another optimizer's state is named as such both ways (Adam's into SGD,
// SGD's into AdamW), and nothing changes.
func TestLoadStateNamesAnotherOptimizer(t *testing.T) {
	dt := tensor.Float64
	for _, c := range []struct {
		from, into string
		want       []string
	}{
		{"adamw", "sgd-nesterov", []string{`"enc.weight.step" is optim.Adam's or optim.AdamW's state`, "load it into optim.Adam or optim.AdamW"}},
		{"sgd-nesterov", "adamw", []string{`"enc.weight.momentum_buffer" is optim.SGD's state`, "load it into optim.SGD"}},
	} {
		pa := testParams(dt)
		a := stateful[c.from](pa)
		if err := a.Step(pa, testGrads(dt, 0)); err != nil {
			t.Fatal(err)
		}
		b := stateful[c.into](pa)
		err := b.LoadState(pa, a.State())
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s's state into %s: %v\nwant it to say %s", c.from, c.into, err, w)
			}
		}
		if len(b.State()) != 0 {
			t.Errorf("%s's refused state changed %s's", c.from, c.into)
		}
	}
}
