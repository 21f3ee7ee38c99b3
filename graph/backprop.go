package graph

// Symbolic reverse-mode differentiation over a gorgonia graph.
//
// This replaces gorgonia.Grad for three reasons: gorgonia's Backpropagate
// reuses a node's derivative from an earlier call, so differentiating a
// gradient (double backward) through a composite graph silently gives wrong
// results; it can only differentiate with respect to input nodes, while
// experiments want gradients at pre-activations; and it panics on ops
// without symbolic derivatives instead of saying which op that is.

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Grad returns nodes holding the gradient of the scalar cost with respect to
// each node in wrt (parameters, inputs or intermediate nodes). It may be
// called again on a graph that already holds gradients, e.g. to build a
// Hessian-vector product from a gradient. A node of wrt that does not
// affect cost is an error naming both (an unnamed cost by the named nodes
// it is computed from).
func (g *Graph) Grad(cost *G.Node, wrt ...*G.Node) (grads []*G.Node, err error) {
	return g.grad(cost, wrt, false)
}

// grad is Grad; with allowUnused a node of wrt that does not affect cost
// gets a nil gradient instead of an error (PyTorch's allow_unused).
func (g *Graph) grad(cost *G.Node, wrt []*G.Node, allowUnused bool) (grads []*G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			grads, err = nil, fmt.Errorf("graph.Grad: %v", r)
		}
	}()
	if err := g.check(); err != nil {
		return nil, err
	}
	if err := g.checkCost(cost); err != nil {
		return nil, err
	}
	if len(wrt) == 0 {
		return nil, fmt.Errorf("graph.Grad: no nodes to differentiate with respect to")
	}
	sorted, err := G.Sort(g.eg) // consumers before the nodes they read
	if err != nil {
		return nil, fmt.Errorf("graph.Grad: sorting the graph: %w", err)
	}
	active, err := activeNodes(g.eg, sorted, cost, wrt)
	if err != nil {
		return nil, err
	}
	for _, w := range wrt {
		if w == nil || w.Graph() != g.eg {
			return nil, fmt.Errorf("graph.Grad: node %v is not in this graph", w)
		}
		if !active[w] && !allowUnused {
			return nil, fmt.Errorf("graph.Grad: %s does not affect the cost %s through differentiable ops", describeNode(g.eg, w), describeNode(g.eg, cost))
		}
	}

	one, err := g.constOne(cost.Dtype())
	if err != nil {
		return nil, err
	}
	pending := map[*G.Node][]*G.Node{cost: {one}}
	total := map[*G.Node]*G.Node{}
	for _, n := range sorted {
		if !active[n] {
			continue
		}
		sum, err := g.addAll(pending[n])
		if err != nil {
			return nil, fmt.Errorf("graph.Grad: summing the gradients of %q: %w", n.Name(), err)
		}
		total[n] = sum
		if n.Op() == nil {
			continue // an input or parameter: nothing to propagate to
		}
		op, ok := n.Op().(G.SDOp)
		if !ok {
			return nil, fmt.Errorf("graph.Grad: op %v (node %q, shape %v) has no symbolic derivative", n.Op(), n.Name(), n.Shape())
		}
		children := childrenOf(g.eg, n)
		childGrads, err := op.SymDiff(children, n, sum)
		if err != nil {
			return nil, fmt.Errorf("graph.Grad: differentiating %v (node %q, shape %v): %w", n.Op(), n.Name(), n.Shape(), err)
		}
		diff := op.DiffWRT(len(children))
		for i, c := range children {
			if i < len(diff) && diff[i] && active[c] && i < len(childGrads) && childGrads[i] != nil {
				pending[c] = append(pending[c], childGrads[i])
			}
		}
	}
	grads = make([]*G.Node, len(wrt))
	for i, w := range wrt {
		grads[i] = total[w] // nil when w is unused
	}
	return grads, nil
}

// describeNode names n for an error message: its name in quotes, or, for
// a node gorgonia named after its op and operands' ids ("+ false(%2b,
// %28)", which means nothing to a user), the named nodes it is computed
// from (inputs, parameters, nodes given a name).
func describeNode(eg *G.ExprGraph, n *G.Node) string {
	if !autoNamed(n) {
		return fmt.Sprintf("%q", n.Name())
	}
	const show = 4
	var from []string
	more := 0
	seen := map[*G.Node]bool{n: true}
	queue := []*G.Node{n}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		for _, c := range childrenOf(eg, m) {
			switch {
			case seen[c]:
			case autoNamed(c):
				queue = append(queue, c)
			case len(from) < show:
				from = append(from, fmt.Sprintf("%q", c.Name()))
			default:
				more++
			}
			seen[c] = true
		}
	}
	s := "(an unnamed node"
	if len(from) > 0 {
		s += " computed from " + strings.Join(from, ", ")
		if more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
	}
	return s + ")"
}

// autoNamed reports whether n has the name gorgonia gives an op's output
// that was created without one.
func autoNamed(n *G.Node) bool {
	if n.Op() == nil {
		return false
	}
	name := n.Name()
	return strings.HasPrefix(name, fmt.Sprint(n.Op())+"(") && strings.HasSuffix(name, ")")
}

// activeNodes marks the nodes that lie on a differentiable path from any
// node in wrt to cost.
func activeNodes(eg *G.ExprGraph, sorted G.Nodes, cost *G.Node, wrt []*G.Node) (map[*G.Node]bool, error) {
	reachesCost := map[*G.Node]bool{cost: true}
	for _, n := range sorted {
		if !reachesCost[n] || n.Op() == nil {
			continue
		}
		children := childrenOf(eg, n)
		diff := differentiable(n, len(children))
		for i, c := range children {
			// Ops without symbolic derivatives pass reachability on, so that
			// Grad can name them instead of reporting "does not affect".
			if diff == nil || (i < len(diff) && diff[i]) {
				reachesCost[c] = true
			}
		}
	}
	dependsOnWrt := map[*G.Node]bool{}
	for _, w := range wrt {
		dependsOnWrt[w] = true
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		n := sorted[i]
		children := childrenOf(eg, n)
		diff := differentiable(n, len(children))
		for j, c := range children {
			// An input the op declares non-differentiable (SizeOf in
			// gorgonia.Mean, say) does not carry dependence: the op's
			// output is a constant as far as the gradient goes.
			if dependsOnWrt[c] && (diff == nil || (j < len(diff) && diff[j])) {
				dependsOnWrt[n] = true
				break
			}
		}
	}
	active := map[*G.Node]bool{}
	for n := range reachesCost {
		if dependsOnWrt[n] {
			active[n] = true
		}
	}
	return active, nil
}

// differentiable returns which of n's inputs its op can differentiate with
// respect to, or nil when the op has no symbolic derivative (or n is an
// input): nil passes reachability on so that Grad can name the op.
func differentiable(n *G.Node, inputs int) []bool {
	if op, ok := n.Op().(G.SDOp); ok {
		return op.DiffWRT(inputs)
	}
	return nil
}

func childrenOf(eg *G.ExprGraph, n *G.Node) G.Nodes {
	it := eg.From(n.ID())
	var out G.Nodes
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}

// addAll sums the gradients reaching one node, left to right. The sums are
// recorded so that a Machine adds them into a buffer of its own instead of
// running gorgonia's Add, which allocates.
func (g *Graph) addAll(ns []*G.Node) (*G.Node, error) {
	if len(ns) == 0 {
		return nil, fmt.Errorf("no gradient reached the node")
	}
	sum := ns[0]
	for _, n := range ns[1:] {
		var err error
		if sum, err = G.Add(sum, n); err != nil {
			return nil, err
		}
		if g.sums == nil {
			g.sums = map[*G.Node]bool{}
		}
		g.sums[sum] = true
	}
	return sum, nil
}

func (g *Graph) checkCost(cost *G.Node) error {
	if cost == nil {
		return fmt.Errorf("graph: cost is nil")
	}
	if cost.Graph() != g.eg {
		return fmt.Errorf("graph: cost %q is not in this graph", cost.Name())
	}
	if !cost.IsScalar() {
		return fmt.Errorf("graph: cost %q has shape %v, want a scalar (reduce it with gorgonia.Sum or gorgonia.Mean)", cost.Name(), cost.Shape())
	}
	if dt := cost.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return fmt.Errorf("graph: cost %q has dtype %v, want float32 or float64", cost.Name(), dt)
	}
	return nil
}

func (g *Graph) constOne(dt tensor.Dtype) (*G.Node, error) {
	var v interface{} = 1.0
	if dt == tensor.Float32 {
		v = float32(1)
	}
	return g.eg.AddNode(G.NewConstant(v)), nil
}
