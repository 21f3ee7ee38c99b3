package fused_test

// Under graph.BFloat16 the matrix products (Linear, MatMul, BatchedMatMul,
// attention, forward and backward) run in gemm.GemmBF16, every other op
// as before: each product here is compared bit for bit with GemmBF16 on
// the same operands, and the attention with a float64 reference.

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/ops/gemm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// weighted returns Σ y ⊙ c, whose gradient with respect to y is c
// exactly, so the gradients of the products are products of c.
func weighted(t *testing.T, g *graph.Graph, y *G.Node) (loss, c *G.Node) {
	t.Helper()
	c, err := g.Input("c", y.Shape()...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := fused.Mul(y, c)
	if err != nil {
		t.Fatal(err)
	}
	if loss, err = G.Sum(p); err != nil {
		t.Fatal(err)
	}
	return loss, c
}

func f32s(t *testing.T, v G.Value, err error) []float32 {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), v.Data().([]float32)...)
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v, gemm.GemmBF16 gives %v", what, i, got[i], want[i])
		}
	}
}

// TestLinearAutocastBF16 checks y = x·wᵀ + b, dx = c·w and dw = cᵀ·x
// against gemm.GemmBF16, bit for bit, then that switching the graph back
// to Full gives the float32 products of a graph never switched.
func TestLinearAutocastBF16(t *testing.T) {
	const rows, in, out = 37, 70, 45
	build := func(p graph.Precision) (*graph.Graph, *graph.Machine, [4]*G.Node) {
		g, _ := graph.New(tensor.Float32, 5)
		if err := g.SetAutocast(p); err != nil {
			t.Fatal(err)
		}
		x, _ := g.Param("x", graph.Normal(0, 1), rows, in)
		w, _ := g.Param("w", graph.Normal(0, 1), out, in)
		b, _ := g.Param("b", graph.Normal(0, 1), out)
		y, err := fused.Linear(x, w, b)
		if err != nil {
			t.Fatal(err)
		}
		loss, c := weighted(t, g, y)
		m, err := g.Compile(loss, graph.Keep(y))
		if err != nil {
			t.Fatal(err)
		}
		cv, _ := graph.NewTensor(tensor.Float32, graph.Normal(0, 1), rng.New(9, "c"), rows, out)
		if err := m.Set(c, cv); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		return g, m, [4]*G.Node{x, w, b, y}
	}
	g, m, n := build(graph.BFloat16)
	x, w, b := n[0].Value().Data().([]float32), n[1].Value().Data().([]float32), n[2].Value().Data().([]float32)
	cv, _ := graph.NewTensor(tensor.Float32, graph.Normal(0, 1), rng.New(9, "c"), rows, out)
	c := cv.Data().([]float32)

	wantY := make([]float32, rows*out)
	for i := range rows {
		copy(wantY[i*out:], b)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(gemm.GemmBF16(false, true, rows, out, in, 1, x, in, w, in, 1, wantY, out))
	wantDX, wantDW := make([]float32, rows*in), make([]float32, out*in)
	must(gemm.GemmBF16(false, false, rows, in, out, 1, c, out, w, in, 0, wantDX, in))
	must(gemm.GemmBF16(true, false, out, in, rows, 1, c, out, x, in, 0, wantDW, in))

	y, err := m.Value(n[3])
	sameBits(t, "y", f32s(t, y, err), wantY)
	dx, err := m.Grad(n[0])
	sameBits(t, "dx", f32s(t, dx, err), wantDX)
	dw, err := m.Grad(n[1])
	sameBits(t, "dw", f32s(t, dw, err), wantDW)

	// Back to Full: the float32 products, as in a graph never switched.
	if err := g.SetAutocast(graph.Full); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	_, m32, n32 := build(graph.Full)
	for i, node := range []*G.Node{n[3]} {
		got, err := m.Value(node)
		g32 := f32s(t, got, err)
		want, err := m32.Value(n32[3+i])
		w32 := f32s(t, want, err)
		for j := range g32 {
			if g32[j] != w32[j] {
				t.Fatalf("switched back to Full: y[%d] = %v, %v in a float32 graph", j, g32[j], w32[j])
			}
		}
		if g32[0] == wantY[0] && g32[1] == wantY[1] && g32[2] == wantY[2] {
			t.Fatalf("Full and BFloat16 give the same y: the setting is not read")
		}
	}
}

// TestBatchedMatMulAutocastBF16 checks a batched product and its
// gradients against gemm.GemmBF16 per batch entry.
func TestBatchedMatMulAutocastBF16(t *testing.T) {
	const batch, m, k, n = 3, 9, 17, 11
	g, _ := graph.New(tensor.Float32, 6)
	if err := g.SetAutocast(graph.BFloat16); err != nil {
		t.Fatal(err)
	}
	a, _ := g.Param("a", graph.Normal(0, 1), batch, k, m) // used transposed
	b, _ := g.Param("b", graph.Normal(0, 1), batch, k, n)
	y, err := fused.BatchedMatMul(a, b, true, false)
	if err != nil {
		t.Fatal(err)
	}
	loss, c := weighted(t, g, y)
	mach, err := g.Compile(loss, graph.Keep(y))
	if err != nil {
		t.Fatal(err)
	}
	cv, _ := graph.NewTensor(tensor.Float32, graph.Normal(0, 1), rng.New(9, "c"), batch, m, n)
	if err := mach.Set(c, cv); err != nil {
		t.Fatal(err)
	}
	if err := mach.Run(); err != nil {
		t.Fatal(err)
	}
	av, bv, cd := a.Value().Data().([]float32), b.Value().Data().([]float32), cv.Data().([]float32)
	wantY, wantDA, wantDB := make([]float32, batch*m*n), make([]float32, batch*k*m), make([]float32, batch*k*n)
	for i := range batch {
		ai, bi, ci := av[i*k*m:(i+1)*k*m], bv[i*k*n:(i+1)*k*n], cd[i*m*n:(i+1)*m*n]
		for _, err := range []error{
			gemm.GemmBF16(true, false, m, n, k, 1, ai, m, bi, n, 0, wantY[i*m*n:], n),
			gemm.GemmBF16(false, true, k, m, n, 1, bi, n, ci, n, 0, wantDA[i*k*m:], m), // dA = B·Gᵀ (A is stored k×m)
			gemm.GemmBF16(false, false, k, n, m, 1, ai, m, ci, n, 0, wantDB[i*k*n:], n),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	yv, err := mach.Value(y)
	sameBits(t, "y", f32s(t, yv, err), wantY)
	da, err := mach.Grad(a)
	sameBits(t, "da", f32s(t, da, err), wantDA)
	db, err := mach.Grad(b)
	sameBits(t, "db", f32s(t, db, err), wantDB)
}

// TestAttentionAutocastBF16 checks causal attention under BFloat16
// against a float64 reference in which the operands of its two products
// (Q and K, then P and V) are rounded to bfloat16: the difference must be
// within a bound for float32 arithmetic around those roundings, and the
// float32 op's result must lie outside the bfloat16 reference's bound
// (the setting changes the products).
func TestAttentionAutocastBF16(t *testing.T) {
	const batch, tt, heads, d = 2, 13, 2, 16
	dh := d / heads
	run := func(p graph.Precision) ([]float32, []float32) {
		g, _ := graph.New(tensor.Float32, 8)
		if err := g.SetAutocast(p); err != nil {
			t.Fatal(err)
		}
		qkv, _ := g.Param("qkv", graph.Normal(0, 1), batch*tt, 3*d)
		out, err := fused.ScaledDotProductAttention(qkv, nil, fused.AttentionConfig{Batch: batch, Heads: heads, Causal: true})
		if err != nil {
			t.Fatal(err)
		}
		m, err := g.Compile(must(G.Sum(out)), graph.Keep(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		v, err := m.Value(out)
		return f32s(t, v, err), qkv.Value().Data().([]float32)
	}
	got, qkv := run(graph.BFloat16)
	got32, _ := run(graph.Full)
	r := func(x float32) float64 { return float64(gemm.ToBF16(x).Float32()) }
	scale := 1 / math.Sqrt(float64(dh))
	const u = 0x1p-24 // float32's unit roundoff
	outside := 0
	for bb := range batch {
		for h := range heads {
			at := func(i, part, j int) float32 { return qkv[(bb*tt+i)*3*d+part*d+h*dh+j] }
			for i := range tt {
				// P in float64 from bfloat16 Q and K, as the op's float32
				// softmax approximates it; the op then rounds its float32 P
				// to bfloat16, which may land one bfloat16 step (at most
				// 2⁻⁷·P) from bf16(P) here.
				s := make([]float64, i+1)
				mx := math.Inf(-1)
				for j := range s {
					for e := range dh {
						s[j] += r(at(i, 0, e)) * r(at(j, 1, e))
					}
					s[j] *= scale
					mx = math.Max(mx, s[j])
				}
				sum := 0.0
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for e := range dh {
					want, mag := 0.0, 0.0
					for j := range s {
						p := s[j] / sum
						want += r(float32(p)) * r(at(j, 2, e))
						mag += p * math.Abs(float64(at(j, 2, e)))
					}
					// float32 sums (dh terms in S, tt in O) and softmax:
					// 2(tt+dh+8)·u relative; a P rounded to the
					// neighbouring bfloat16: 2⁻⁷ of its term.
					bound := (2*float64(tt+dh+8)*u + 0x1p-7) * mag
					g := float64(got[(bb*tt+i)*d+h*dh+e])
					if math.Abs(g-want) > bound {
						t.Fatalf("batch %d head %d row %d col %d: %v, want %v ± %.3g", bb, h, i, e, g, want, bound)
					}
					if math.Abs(float64(got32[(bb*tt+i)*d+h*dh+e])-want) > 2*float64(tt+dh+8)*u*mag {
						outside++
					}
				}
			}
		}
	}
	if total := batch * tt * d; outside < total/2 {
		t.Errorf("the float32 attention is within float32 rounding of the bfloat16 reference in %d of %d outputs: the reference does not tell them apart", total-outside, total)
	}

	// The same products composed by hand: S = Q·Kᵀ/√d_h and O = P·V in
	// gemm.GemmBF16, the causal softmax in float32 (fused.SoftmaxRow):
	// the op must give these bits.
	want := make([]float32, batch*tt*d)
	s := make([]float32, tt*tt)
	for bb := range batch {
		for h := range heads {
			q := qkv[bb*tt*3*d+h*dh:]
			if err := gemm.GemmBF16(false, true, tt, tt, dh, float32(scale), q, 3*d, q[d:], 3*d, 0, s, tt); err != nil {
				t.Fatal(err)
			}
			for i := range tt {
				row := s[i*tt : (i+1)*tt]
				clear(row[i+1:])
				fused.SoftmaxRow(row[:i+1], row[:i+1])
			}
			if err := gemm.GemmBF16(false, false, tt, dh, tt, 1, s, tt, q[2*d:], 3*d, 0, want[bb*tt*d+h*dh:], d); err != nil {
				t.Fatal(err)
			}
		}
	}
	sameBits(t, "attention", got, want)
}

func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(err)
	}
	return n
}

// TestSetAutocastErrors: bfloat16 products need a float32 graph, and only
// the two precisions exist.
func TestSetAutocastErrors(t *testing.T) {
	g64, _ := graph.New(tensor.Float64, 1)
	if err := g64.SetAutocast(graph.BFloat16); err == nil {
		t.Error("bfloat16 autocast accepted on a float64 graph")
	}
	if g64.Autocast() != graph.Full {
		t.Errorf("a refused setting changed the graph: %v", g64.Autocast())
	}
	g32, _ := graph.New(tensor.Float32, 1)
	if err := g32.SetAutocast(graph.Precision(7)); err == nil {
		t.Error("Precision(7) accepted")
	}
}
