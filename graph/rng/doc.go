// Package rng is the project's source of randomness: a seeded PCG stream with
// uniform, normal and integer samples, shuffles and permutations.
//
// Every sample is a fixed function of the seed and stream name, computed
// with explicitly rounded float64 operations only (its logarithm is its own,
// not math.Log, whose result depends on the CPU's FMA support and on the
// architecture), so the same seed gives the same numbers on any machine and
// any Go version that keeps math/rand/v2's PCG.
//
//	r := rng.New(42, "fc1.weight")
//	w := r.Normal() * 0.02
//	fmt.Println(w == rng.New(42, "fc1.weight").Normal()*0.02) // the same stream, the same numbers
//
// Streams with different names are independent, so adding a layer does not
// change the initialization of the others.
package rng
