package graph_test

import (
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

func TestAddParamSharesTheTensor(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	v := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))
	n, err := g.AddParam("w", v)
	if err != nil {
		t.Fatal(err)
	}
	if n.Value() != v {
		t.Fatal("AddParam copied the tensor; it must use it in place")
	}
	if ps := g.ParamTensors(); len(ps) != 1 || ps[0].Name != "w" {
		t.Fatalf("ParamTensors = %v, want the one parameter w", ps)
	}
	for _, c := range []struct {
		name string
		v    *tensor.Dense
		want string
	}{
		{"w", v, "already used"},
		{"x", nil, "nil tensor"},
		{"y", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2})), "dtype"},
	} {
		if _, err := g.AddParam(c.name, c.v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddParam(%q): %v, want an error about %q", c.name, err, c.want)
		}
	}
}

func TestStreamName(t *testing.T) {
	g, _ := graph.New(tensor.Float32, 1)
	if got := g.StreamName("h.0.drop"); got != "h.0.drop" {
		t.Errorf("StreamName without a mapping = %q", got)
	}
	g.SetStreamNames(func(s string) string { return strings.Replace(s, "h.0", "h.3", 1) })
	if got := g.StreamName("h.0.drop"); got != "h.3.drop" {
		t.Errorf("StreamName mapped = %q, want h.3.drop", got)
	}
}
