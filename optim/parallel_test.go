package optim_test

// Large tensors are split across cores: the result must not depend on how,
// and a step must not allocate once the state exists.

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

// bigN spans up to 6 chunks (chunks are at least 16384 elements).
const bigN = 100_003

var bigInputs = func() (in [4][]float64) {
	for i := range in {
		in[i] = randn(fmt.Sprint("big", i), bigN, 1)
	}
	return in
}()

func bigRun(dt tensor.Dtype, newOpt func([]graph.NamedTensor) optim.Optimizer, procs int) []float64 {
	prev := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(prev)
	p := []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{bigN}, bigInputs[0])}}
	o := newOpt(p)
	for s := 1; s < len(bigInputs); s++ {
		if err := o.Step(p, []*tensor.Dense{dense(dt, []int{bigN}, bigInputs[s])}); err != nil {
			panic(err)
		}
	}
	out := graph.Float64s(p[0].Value)
	for _, st := range o.State() {
		out = append(out, graph.Float64s(st.Value)...)
	}
	return out
}

func TestResultsIndependentOfCores(t *testing.T) {
	for _, dt := range dtypes {
		for name, newOpt := range stateful {
			one := bigRun(dt, newOpt, 1)
			for _, procs := range []int{2, 3} {
				if !equalBits(one, bigRun(dt, newOpt, procs)) {
					t.Fatalf("%v %s: GOMAXPROCS %d gives a different result than 1", dt, name, procs)
				}
			}
		}
	}
}

func TestStepDoesNotAllocateAfterTheFirst(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, dt := range dtypes {
		for name, newOpt := range stateful {
			p := []graph.NamedTensor{
				{Name: "big", Value: dense(dt, []int{bigN}, bigInputs[0])},
				{Name: "small", Value: dense(dt, []int{5}, randn("smallp", 5, 1))},
			}
			o := newOpt(p)
			g := []*tensor.Dense{dense(dt, []int{bigN}, bigInputs[1]), dense(dt, []int{5}, randn("smallg", 5, 1))}
			if err := o.Step(p, g); err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(5, func() {
				if err := o.Step(p, g); err != nil {
					panic(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v %s: %v allocations per step", dt, name, allocs)
			}
		}
	}
}
