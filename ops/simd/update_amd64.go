//go:build amd64 && !noasm

package simd

import "golang.org/x/sys/cpu"

// The update kernels run on every path but Generic: AVX-512 on the avx512
// and exact32 paths (they are exact either way), AVX2 on the avx2 path.
// The AVX2 forms also use TZCNT (BMI1, which every AVX2 CPU has so far).

// avx2Update is whether the AVX2 update kernels may run.
var avx2Update = cpu.X86.HasBMI1

// SGD32 runs one SGD step over p (g, and buf with Momentum, at least as
// long) with the kernel of the current path and returns the first index
// whose new parameter is NaN or ±Inf (−1 if none) and ok true; on the
// generic path it does nothing and returns ok false.
func SGD32(p, g, buf []float32, h *[SGDParams]float32, flags UpdateFlags) (bad int, ok bool) {
	if k, ok := pick(SGD32AVX512, SGD32AVX2); ok && sgdFits(len(p), len(g), len(buf), flags) {
		return k(p, g, buf, h, uint8(flags)), true
	}
	return -1, false
}

// SGD64 is SGD32 for float64.
func SGD64(p, g, buf []float64, h *[SGDParams]float64, flags UpdateFlags) (bad int, ok bool) {
	if k, ok := pick(SGD64AVX512, SGD64AVX2); ok && sgdFits(len(p), len(g), len(buf), flags) {
		return k(p, g, buf, h, uint8(flags)), true
	}
	return -1, false
}

// Adam32 runs one Adam or AdamW step over p (g, m, v, and vmax with
// AMSGrad, at least as long) with the kernel of the current path; its
// results are those of SGD32.
func Adam32(p, g, m, v, vmax []float32, h *[AdamParams]float32, flags UpdateFlags) (bad int, ok bool) {
	if k, ok := pick(Adam32AVX512, Adam32AVX2); ok && adamFits(len(p), len(g), len(m), len(v), len(vmax), flags) {
		return k(p, g, m, v, vmax, h, uint8(flags)), true
	}
	return -1, false
}

// Adam64 is Adam32 for float64.
func Adam64(p, g, m, v, vmax []float64, h *[AdamParams]float64, flags UpdateFlags) (bad int, ok bool) {
	if k, ok := pick(Adam64AVX512, Adam64AVX2); ok && adamFits(len(p), len(g), len(m), len(v), len(vmax), flags) {
		return k(p, g, m, v, vmax, h, uint8(flags)), true
	}
	return -1, false
}

// pick returns the form of a kernel for the current path, or ok false on
// the generic path.
func pick[F any](avx512, avx2 F) (k F, ok bool) {
	switch {
	case Current.Has512():
		return avx512, true
	case Current == AVX2 && avx2Update:
		return avx2, true
	}
	return k, false
}

// sgdFits and adamFits check that the kernel reads and writes only inside
// the slices (the assembly trusts the lengths); a caller that breaks this
// gets its own loop, which then fails its bounds checks.
func sgdFits(n, g, buf int, flags UpdateFlags) bool {
	return g >= n && (flags&Momentum == 0 || buf >= n)
}

func adamFits(n, g, m, v, vmax int, flags UpdateFlags) bool {
	return g >= n && m >= n && v >= n && (flags&AMSGrad == 0 || vmax >= n)
}

// FirstNonFinite32 returns the index of the first NaN or ±Inf in x, or −1,
// and ok true; on the generic path it does nothing and returns ok false.
func FirstNonFinite32(x []float32) (bad int, ok bool) {
	if k, ok := pick(FirstNonFinite32AVX512, FirstNonFinite32AVX2); ok {
		return k(x), true
	}
	return -1, false
}

// FirstNonFinite64 is FirstNonFinite32 for float64.
func FirstNonFinite64(x []float64) (bad int, ok bool) {
	if k, ok := pick(FirstNonFinite64AVX512, FirstNonFinite64AVX2); ok {
		return k(x), true
	}
	return -1, false
}
