package graph_test

// SetIDs: integer ids bound to a float input, checked for exactness.

import (
	"math"
	"strconv"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	"gorgonia.org/tensor"
)

func TestSetIDs(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			g, _ := graph.New(dt, 1)
			ids, _ := g.Input("ids", 2, 3)
			table, _ := g.Param("wte.weight", graph.Normal(0, 1), 10, 4)
			emb, err := fused.Embedding(ids, table)
			if err != nil {
				t.Fatal(err)
			}
			m, err := g.Compile(nil, graph.Keep(emb))
			if err != nil {
				t.Fatal(err)
			}
			in := []int{3, 0, 9, 9, 1, 7}
			if err := m.SetIDs(ids, in); err != nil {
				t.Fatal(err)
			}
			if err := m.Run(); err != nil {
				t.Fatal(err)
			}
			v, _ := m.Value(emb)
			got, tab := graph.Float64s(v.(*tensor.Dense)), graph.Float64s(table.Value().(*tensor.Dense))
			for r, id := range in {
				for j := 0; j < 4; j++ {
					if got[r*4+j] != tab[id*4+j] {
						t.Fatalf("row %d = %v, want row %d of the table", r, got[r*4:r*4+4], id)
					}
				}
			}
			if v, _ := m.Value(ids); graph.Float64s(v.(*tensor.Dense))[2] != 9 {
				t.Errorf("ids read back as %v", graph.Float64s(v.(*tensor.Dense)))
			}
			// Writing new ids reuses the machine's buffer.
			if !raceEnabled {
				next := []int{1, 2, 3, 4, 5, 6}
				if n := testing.AllocsPerRun(10, func() { _ = m.SetIDs(ids, next) }); n != 0 {
					t.Errorf("SetIDs allocates %v times per call, want 0", n)
				}
			}

			// The first id the dtype cannot hold exactly: 2^24 in float32,
			// 2^53 in float64 (beyond every int where int has 32 bits).
			limit64 := int64(1) << 53
			if dt == tensor.Float32 {
				limit64 = 1 << 24
			}
			if limit64 <= math.MaxInt {
				limit := int(limit64)
				if err := m.SetIDs(ids, []int{0, 0, limit - 1, -(limit - 1), 0, 0}); err != nil {
					t.Errorf("ids ±(2^k − 1): %v", err)
				}
				wantErr(t, m.SetIDs(ids, []int{0, 0, 0, limit, 0, 0}), "id "+strconv.Itoa(limit)+" at position 3 is not exactly representable in "+dt.String())
				wantErr(t, m.SetIDs(ids, []int{0, 0, 0, 0, 0, -limit}), "at position 5")
			}
			wantErr(t, m.SetIDs(ids, []int{1, 2}), "got 2 ids, want 6")
			wantErr(t, m.SetIDs(table, make([]int, 40)), "not an input")
			wantErr(t, m.SetIDs(nil, in), "nil node")
			wantErr(t, (*graph.Machine)(nil).SetIDs(ids, in), "not compiled")
		})
	}
}
