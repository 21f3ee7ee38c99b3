package dist

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// sameOnAllRanks fails unless every rank got the same error message.
func sameOnAllRanks(t *testing.T, c Comm, err error) string {
	t.Helper()
	msg := "<nil>"
	if err != nil {
		msg = err.Error()
	}
	all, gerr := allgatherBytes(c, []byte(msg))
	if gerr != nil {
		t.Fatal(gerr)
	}
	for r, m := range all {
		if string(m) != msg {
			t.Fatalf("rank %d reports %q, rank %d %q", r, m, c.Rank(), msg)
		}
	}
	return msg
}

// filled gives each parameter seeded values, the same on every rank.
func filled(ps []testParam) []graph.NamedTensor {
	out := namedParams(ps)
	for i, g := range rankGrads(ps, 0, 0) {
		if g != nil {
			out[i].Value = g
		}
	}
	return out
}

// TestRankChecks makes the ranks disagree on the model, on the data and on
// the parameters' values, and checks that every rank reports the same
// error naming the difference and the ranks.
func TestRankChecks(t *testing.T) {
	c := inJob(t)
	n, me, last := c.Size(), c.Rank(), c.Size()-1
	// The others' description next to the last rank's: "rank 0 has X" on
	// 2 ranks, "ranks 0, 1 have X" on 3.
	others := "rank 0 has"
	if n == 3 {
		others = "ranks 0, 1 have"
	}

	if err := CheckModel(c, namedParams(testParams)); err != nil {
		t.Fatal(err)
	}
	ps := append([]testParam(nil), testParams...)
	if me == last {
		ps[1].shape = []int{8}
	}
	msg := sameOnAllRanks(t, c, CheckModel(c, namedParams(ps)))
	if want := fmt.Sprintf(`dist: ranks disagree on the model: parameter 1: %s "fc1.bias" float64 (7), rank %d has "fc1.bias" float64 (8)`, others, last); msg != want {
		t.Fatalf("different shapes:\n got %s\nwant %s", msg, want)
	}
	ps = append([]testParam(nil), testParams...)
	if me == last {
		ps = append(ps, testParam{"extra", tensor.Float32, []int{2}, false})
	}
	msg = sameOnAllRanks(t, c, CheckModel(c, namedParams(ps)))
	if want := fmt.Sprintf(`number of parameters: %s 7, rank %d has 8; parameter 7: %s nothing, rank %d has "extra" float32 (2)`, others, last, others, last); !strings.Contains(msg, want) {
		t.Fatalf("an extra parameter:\n got %s\nwant it to contain %s", msg, want)
	}

	data := map[string]string{"train examples": "60000", "seed": "1", "global batch": "64"}
	if err := CheckSame(c, "the data", data); err != nil {
		t.Fatal(err)
	}
	if me == last {
		data["seed"] = "2"
	}
	msg = sameOnAllRanks(t, c, CheckSame(c, "the data", data))
	if want := fmt.Sprintf("dist: ranks disagree on the data: seed: %s 1, rank %d has 2", others, last); msg != want {
		t.Fatalf("different seeds:\n got %s\nwant %s", msg, want)
	}

	params := filled(testParams)
	if err := CheckParams(c, params); err != nil {
		t.Fatal(err)
	}
	// The last rank's fc2.weight[1, 2] moves by one ulp and rank 0's
	// head.weight[0] by more: fc2.weight comes first.
	w := params[2].Value.Float32s()
	before := w[1*4+2]
	if me == last {
		w[1*4+2] = math.Nextafter32(before, 10)
	}
	if me == 0 {
		params[4].Value.Float64s()[0] += 1
	}
	msg = sameOnAllRanks(t, c, CheckParams(c, params))
	want := fmt.Sprintf(`dist: parameters differ across ranks: first at "fc2.weight" (parameter 3 of 7), element [1 2]: %s %v, rank %d has %v`,
		others, before, last, math.Nextafter32(before, 10))
	if msg != want {
		t.Fatalf("drifted parameters:\n got %s\nwant %s", msg, want)
	}

	// Broadcast from the last rank makes every rank hold its values.
	params = filled(testParams)
	for _, p := range params {
		for j := range p.Value.Shape().TotalSize() {
			if p.Value.Dtype() == tensor.Float32 {
				p.Value.Float32s()[j] += float32(me)
			} else {
				p.Value.Float64s()[j] += float64(me)
			}
		}
	}
	if err := Broadcast(c, params, last); err != nil {
		t.Fatal(err)
	}
	if err := CheckParams(c, params); err != nil {
		t.Fatalf("after Broadcast: %v", err)
	}
	ref := filled(testParams)
	if got, want := params[0].Value.Float32s()[3], ref[0].Value.Float32s()[3]+float32(last); got != want {
		t.Fatalf("after Broadcast from rank %d: %v, want %v", last, got, want)
	}
}
