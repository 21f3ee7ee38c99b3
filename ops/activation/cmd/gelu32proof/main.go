// Command gelu32proof checks the float32 kernels of the GELU family (exact
// GELU by default; -act gelu_tanh, gelu_sigmoid or silu for the others) on
// every one of the 2^32 float32 inputs: for each path and derivative order
// it compares Forward (f), Backward (g·f') and Backward2 (g·f”) with g = 1
// against the float64 reference (F, Deriv, Deriv2 of the activation,
// accurate to a few float64 ulp, so good to about 2^−29 float32 ulp), and prints a Markdown
// table of the largest error in float32 ulp of the reference, how many
// results are not the reference correctly rounded, and the worst inputs.
// Special values count as errors unless exact: NaN for NaN, ±Inf and ±0
// with their signs.
//
//	go run ./ops/activation/cmd/gelu32proof                       # avx512 and avx2
//	go run ./ops/activation/cmd/gelu32proof -paths exact32,avx512 -orders 0,1
//	go run ./ops/activation/cmd/gelu32proof -act gelu_tanh -orders 0
//
// The reference runs through the float64 AVX-512 kernels, bit-identical to
// the scalar reference (so the exact32 or avx512 path must be available for
// float64); each order takes a few minutes on 2 cores.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/simd"
)

const chunk = 1 << 22

// stride > 1 samples the inputs (flag -stride).
var stride uint64 = 1

func main() {
	paths := flag.String("paths", "avx512,avx2", "comma-separated kernel paths (see package simd): avx512, avx2, exact32, generic")
	orders := flag.String("orders", "0,1,2", "comma-separated derivative orders")
	worst := flag.Int("worst", 3, "worst inputs to list per row")
	actName := flag.String("act", "gelu", "activation: gelu, gelu_tanh, gelu_sigmoid or silu")
	flag.Uint64Var(&stride, "stride", 1, "check only the bit patterns k·stride, k < 2^32/stride (a quick sample; 1: all)")
	flag.Parse()
	act, err := activation.ParseActivation(*actName)
	if err == nil {
		err = run(act, *paths, *orders, *worst)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gelu32proof:", err)
		os.Exit(1)
	}
}

// stats are the results of one path and order.
type stats struct {
	maxULP  float64
	wrong   uint64 // not the correctly rounded reference
	special uint64 // NaN, Inf or zero (or its sign) wrong
	worst   []bad
}

type bad struct {
	x        float32
	got      float32
	ref, ulp float64
}

func (s *stats) add(o *stats, keep int) {
	s.maxULP = math.Max(s.maxULP, o.maxULP)
	s.wrong += o.wrong
	s.special += o.special
	s.worst = append(s.worst, o.worst...)
	s.trim(keep)
}

func (s *stats) trim(keep int) {
	sort.Slice(s.worst, func(i, j int) bool { return s.worst[i].ulp > s.worst[j].ulp })
	if len(s.worst) > keep {
		s.worst = s.worst[:keep]
	}
}

func run(act activation.Activation, pathList, orderList string, keep int) error {
	if !simd.Available {
		return fmt.Errorf("no assembly kernels on this CPU or build (GELU_KERNELS=%q)", os.Getenv("GELU_KERNELS"))
	}
	var paths []simd.Path
	for _, s := range strings.Split(pathList, ",") {
		p, err := simd.ParsePath(s)
		if err != nil {
			return err
		}
		if !has(simd.Paths(), p) {
			return fmt.Errorf("path %s: this CPU cannot run it (it can: %v)", p, simd.Paths())
		}
		paths = append(paths, p)
	}
	var orders []int
	for _, s := range strings.Split(orderList, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 0 || k > 2 {
			return fmt.Errorf("-orders: want 0, 1 or 2, found %q", s)
		}
		orders = append(orders, k)
	}
	refPath := simd.Exact32
	if !has(simd.Paths(), refPath) {
		return fmt.Errorf("the float64 reference needs the AVX-512 kernels (this CPU has %v)", simd.Paths())
	}
	inputs := "all 2^32 inputs"
	if stride > 1 {
		inputs = fmt.Sprintf("every %d-th of the 2^32 bit patterns", stride)
	}
	fmt.Printf("%s, float32, %s, g = 1 (%d cores, %s)\n\n", act, inputs, runtime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02"))
	fmt.Println("| path | f^(k) | max error (ulp) | not correctly rounded | special values wrong | worst inputs x → got (reference) |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, k := range orders {
		start := time.Now()
		ss := proveOrder(act, paths, refPath, k, keep)
		for i, p := range paths {
			s := ss[i]
			var w []string
			for _, b := range s.worst {
				w = append(w, fmt.Sprintf("%v → %v (%.9g, %.3f ulp)", b.x, b.got, b.ref, b.ulp))
			}
			fmt.Printf("| %s | %d | %.3f | %d (%.2g%%) | %d | %s |\n", p, k, s.maxULP, s.wrong,
				100*float64(s.wrong)/float64(1<<32/stride), s.special, strings.Join(w, "; "))
		}
		fmt.Fprintf(os.Stderr, "f^(%d): %v\n", k, time.Since(start).Round(time.Second))
	}
	return nil
}

func has(ps []simd.Path, p simd.Path) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// proveOrder sweeps all bit patterns in chunks: the reference in float64
// on refPath once per chunk, then the kernel under test on each path, each
// compared with the reference on every core.
func proveOrder(act activation.Activation, paths []simd.Path, refPath simd.Path, order, keep int) []stats {
	x := make([]float32, chunk)
	got := make([]float32, chunk)
	ones := make([]float32, chunk)
	x64 := make([]float64, chunk)
	ref := make([]float64, chunk)
	ones64 := make([]float64, chunk)
	for i := range ones {
		ones[i], ones64[i] = 1, 1
	}
	defer simd.Use(simd.Use(refPath))
	workers := runtime.GOMAXPROCS(0)
	each := func(f func(lo, hi int)) {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(w*chunk/workers, (w+1)*chunk/workers)
			}()
		}
		wg.Wait()
	}
	total := make([]stats, len(paths))
	for base := uint64(0); base < 1<<32/stride; base += chunk {
		each(func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x[i] = math.Float32frombits(uint32((base + uint64(i)) * stride))
				x64[i] = float64(x[i])
			}
		})
		simd.Use(refPath)
		mustKernel(act, order, ref, x64, ones64)
		for pi, p := range paths {
			simd.Use(p)
			mustKernel(act, order, got, x, ones)
			parts := make([]stats, workers)
			each(func(lo, hi int) {
				parts[lo*workers/chunk] = compare(x[lo:hi], got[lo:hi], ref[lo:hi], keep)
			})
			for i := range parts {
				total[pi].add(&parts[i], keep)
			}
		}
	}
	return total
}

func mustKernel[T float32 | float64](act activation.Activation, order int, dst, x, ones []T) {
	var err error
	switch order {
	case 0:
		err = activation.Forward(act, dst, x)
	case 1:
		err = activation.Backward(act, dst, x, ones)
	default:
		err = activation.Backward2(act, dst, x, ones)
	}
	if err != nil {
		panic(err) // the lengths are equal by construction
	}
}

// compare measures got against the float64 reference.
func compare(x, got []float32, ref []float64, keep int) stats {
	var s stats
	for i, r := range ref {
		g := got[i]
		if r != r || math.IsInf(r, 0) || r == 0 || g != g || math.IsInf(float64(g), 0) || g == 0 {
			// Exact cases: the float32 result must be the reference rounded,
			// bit for bit (a reference that rounds to ±0 or ±Inf included).
			want := float32(r)
			if !(want != want && g != g) && math.Float32bits(want) != math.Float32bits(g) {
				s.special++
				s.worst = append(s.worst, bad{x[i], g, r, math.Inf(1)})
				s.maxULP = math.Inf(1)
				s.trim(keep)
			}
			if float32(r) != g {
				s.wrong++
			}
			continue
		}
		if float32(r) != g {
			s.wrong++
		}
		e := math.Abs(float64(g)-r) / ulp32(r)
		if e > s.maxULP || (len(s.worst) < keep && e > 0.5) {
			s.maxULP = math.Max(s.maxULP, e)
			s.worst = append(s.worst, bad{x[i], g, r, e})
			s.trim(keep)
		}
	}
	return s
}

// ulp32 is the float32 ulp at the true value v: 2^(e−24) for |v| in
// [2^(e−1), 2^e), at least 2^−149 (subnormals).
func ulp32(v float64) float64 {
	_, e := math.Frexp(v)
	return math.Ldexp(1, max(e-24, -149))
}
