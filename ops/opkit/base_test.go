package opkit

import "testing"

// A signature with one optional input: without it the op takes the
// required inputs only, with it all of them; the result type comes last.
func TestSignature(t *testing.T) {
	s := Signature{In: []int{2, 2, 1}, Required: 2, Out: 2}
	for _, c := range []struct {
		optional bool
		arity    int
		typ      string
	}{
		{false, 2, "Matrix a → Matrix a → Matrix a"},
		{true, 3, "Matrix a → Matrix a → Vector a → Matrix a"},
	} {
		if got := s.Arity(c.optional); got != c.arity {
			t.Errorf("Arity(%v) = %d, want %d", c.optional, got, c.arity)
		}
		if got := s.Type(c.optional).String(); got != c.typ {
			t.Errorf("Type(%v) = %s, want %s", c.optional, got, c.typ)
		}
	}
	if s.Type(true) == s.Type(true) {
		t.Error("Type returned the same value twice; gorgonia mutates types, each call needs a fresh one")
	}
	if len(s.In) != 3 || s.In[2] != 1 {
		t.Errorf("Type changed the signature: In = %v", s.In)
	}
}
