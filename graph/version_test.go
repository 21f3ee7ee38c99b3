package graph_test

import (
	"sync"
	"testing"

	"github.com/geluproject/gelu/graph"
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
