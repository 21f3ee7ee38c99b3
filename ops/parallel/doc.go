// Package parallel splits loops over the cores: the activation kernels, the
// fused layer ops and the optimizers all run their elementwise and per-row
// loops through For, and the own GEMM its split products, so that the
// work-sharing and its zero-allocation pool of workers live in one place.
// Between loops the workers spin briefly for the next one (a training
// step's loops follow each other closely, and waking a parked thread costs
// tens of microseconds on a virtual machine), then park. The spin costs a
// busy machine some speed (the spinning thread competes with the caller
// for a core another process also wants): SetSpin(0), or GELU_SPIN_US=0 in
// the environment, parks the workers at once.
//
// Minimal use (ExampleElements):
//
//	x := make([]float64, 100_000)
//	for i := range x {
//		x[i] = float64(i)
//	}
//	y := make([]float64, len(x))
//	parallel.Elements(len(x), func(lo, hi int) {
//		for i := lo; i < hi; i++ {
//			y[i] = 2 * x[i]
//		}
//	})
//	fmt.Println(y[1], y[len(y)-1])
//
// A loop that runs every training step passes a pointer to a struct with a
// Run(lo, hi int) method to For instead, and allocates nothing per call
// (ExampleFor).
package parallel
