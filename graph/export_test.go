package graph

import "testing"

// Unplaced lists the tensor-valued op nodes whose memory the machine does
// not plan (ops that keep their own), for the liveness tests.
func Unplaced(m *Machine) []string {
	var out []string
	for _, s := range m.exec.steps {
		if (s.kind == stepDo) && !s.node.IsScalar() {
			out = append(out, s.node.Name())
		}
	}
	return out
}

// CheckBufferPlan is checkBufferPlan for the external tests.
func CheckBufferPlan(t *testing.T, m *Machine) { t.Helper(); checkBufferPlan(t, m.exec) }
