package graph

import (
	"runtime"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

// TestAutocastSetting: the setting round-trips, every node of the graph
// sees it (ops built before or after), other graphs do not, and names
// parse.
func TestAutocastSetting(t *testing.T) {
	g, _ := New(tensor.Float32, 1)
	x, _ := g.Input("x", 2, 2)
	other, _ := New(tensor.Float32, 1)
	y, _ := other.Input("y", 2, 2)
	cell := AutocastOf(x) // as an op built now keeps it
	if g.Autocast() != Full || cell.Precision() != Full {
		t.Fatalf("a new graph: %v, %v; want full", g.Autocast(), cell.Precision())
	}
	if err := g.SetAutocast(BFloat16); err != nil {
		t.Fatal(err)
	}
	w, _ := g.Param("w", Zeros(), 2, 2)
	if g.Autocast() != BFloat16 || cell.Precision() != BFloat16 || AutocastOf(w).Precision() != BFloat16 {
		t.Errorf("after SetAutocast(BFloat16): graph %v, an earlier node's cell %v, a later node %v", g.Autocast(), cell.Precision(), AutocastOf(w).Precision())
	}
	if AutocastOf(y).Precision() != Full || other.Autocast() != Full {
		t.Error("another graph follows the setting")
	}
	if AutocastOf(nil).Precision() != Full {
		t.Error("AutocastOf(nil) is not Full")
	}
	for s, want := range map[string]Precision{"bf16": BFloat16, "bfloat16": BFloat16, "full": Full, "float32": Full, "": Full} {
		if p, err := ParsePrecision(s); err != nil || p != want {
			t.Errorf("ParsePrecision(%q) = %v, %v; want %v", s, p, err, want)
		}
	}
	if _, err := ParsePrecision("fp8"); err == nil {
		t.Error("ParsePrecision(fp8) accepted")
	}
	if BFloat16.String() != "bfloat16" || Full.String() != "full" {
		t.Errorf("names %q, %q", BFloat16, Full)
	}
}

// TestAutocastRegistryForgetsGraphs: the entry of a graph nobody holds
// is dropped once it is collected, so building graphs in a loop (a sweep)
// does not grow the registry.
func TestAutocastRegistryForgetsGraphs(t *testing.T) {
	size := func() int {
		autocasts.Lock()
		defer autocasts.Unlock()
		return len(autocasts.m)
	}
	before := size()
	for range 50 {
		g, _ := New(tensor.Float32, 1)
		_ = g.SetAutocast(BFloat16)
	}
	if size() < before+50 {
		t.Fatalf("registry has %d entries after 50 graphs, had %d", size(), before)
	}
	for range 50 {
		runtime.GC()
		if size() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	}
	t.Errorf("registry has %d entries after the graphs were collected, had %d", size(), before)
}
