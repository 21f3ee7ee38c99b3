//go:build !amd64 || noasm

package ops

// Without the amd64 assembly every activation runs the portable loops.

// KernelsName says which kernels the activations use: "portable Go" here.
func KernelsName() string { return "portable Go" }

// useSIMD is false: there is no assembly here.
var useSIMD = false

func simd32(*chunkKernel[float32]) {}

func simd64(*chunkKernel[float64]) {}

// runAsm is never called: no kernel has an assembly function here.
func (k chunkKernel[T]) runAsm(dst, x, g []T, add bool) { scalarChunk(k.a, k.order, dst, x, g, add) }
