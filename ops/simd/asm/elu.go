package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/reg"
)

// eluFast32 evaluates ELU with scale α = p[0] in float64 lanes and stores
// the float32 rounding where it is certain to equal the reference's (see
// certain); the Go caller computes the other lanes. With e = e^x from
// fastExp (relative error below 2^−49):
//
//	x ≤ 0:  f = α·e − α (one rounding),  f' = f” = α·e
//	x > 0:  f = x,                       f' = 1,  f” = 0
//
// f's error is relative to the scale α·e + α, so where e^x − 1 cancels
// (x near 0) the check hands lanes back rather than store a doubtful
// rounding. f(±0) = ±0 = x, as the reference's α·expm1(±0); the derivatives
// at 0 are the left-hand ones, as in the reference. Every result gets x·0
// added, which is ±0 for finite x and NaN for NaN and ±Inf: those lanes
// fail the check and go back to the reference.
func eluFast32(order int) kernel {
	return kernel{
		name:  fmt.Sprintf("ELUFast32D%d", order),
		f32:   true,
		withG: order > 0,
		doc: []string{fmt.Sprintf("ELUFast32D%d sets dst to (or, with add, adds) g·f^(%d)(x) for ELU with α = p[0] in float32,", order, order),
			"equal to the float64 reference rounded, except in lanes it leaves alone and reports."},
		setup: func(p GPVirtual) body {
			alpha := param(p, 0)
			return func(x V) (V, V, K_) {
				e := fastExp(minV(c(0), maxV(c(-746), x)))
				if order == 0 {
					right := cmp(cmpGE, x, c(0))
					f := fma(x, c(0), blend(right, fms(alpha, e, alpha), x))
					return f, blend(right, fma(alpha, e, alpha), x), nil
				}
				right := cmp(cmpGT, x, c(0))
				one := 1.0
				if order == 2 {
					one = 0
				}
				f := fma(x, c(0), blend(right, mul(alpha, e), c(one)))
				return f, f, nil
			}
		},
	}
}
