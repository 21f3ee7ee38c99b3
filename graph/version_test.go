package graph_test

import (
	"sync"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// Every MarkParamsChanged, from any goroutine, moves ParamsVersion on by
// one: a cache that saw version v and sees v again has missed no change.
func TestParamsVersionCountsEveryChange(t *testing.T) {
	before := graph.ParamsVersion()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				graph.MarkParamsChanged()
			}
		}()
	}
	wg.Wait()
	if got := graph.ParamsVersion() - before; got < 800 {
		t.Errorf("ParamsVersion moved by %d after 800 changes", got)
	}
}

// SetFloat64s writes in place, into what may be a parameter, and marks the
// change; FromFloat64s makes a new tensor and does not (a cache of a model
// must not start again because a batch was built).
func TestSetFloat64sMarksParamsChanged(t *testing.T) {
	v := graph.ParamsVersion()
	x, err := graph.FromFloat64s(tensor.Float32, []float64{1, 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if graph.ParamsVersion() != v {
		t.Error("FromFloat64s marked parameters changed")
	}
	if err := graph.SetFloat64s(x, []float64{3, 4}); err != nil {
		t.Fatal(err)
	}
	if graph.ParamsVersion() == v {
		t.Error("SetFloat64s did not mark parameters changed")
	}
}
