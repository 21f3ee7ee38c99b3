//go:build !amd64 || noasm

package gemm

// Without assembly the portable kernel is the only bf16 path.
var bf16Paths = []*bf16Kernel{&bf16GenericPath}

// bf16PeakLoop: no VDPBF16PS loop without assembly.
var bf16PeakLoop func(int)

func bf16ToBF16s(dst []BF16, src []float32)   { bf16ToBF16sGo(dst, src) }
func bf16FromBF16s(dst []float32, src []BF16) { bf16FromBF16sGo(dst, src) }

func bf16PackPairsAsm(dst []uint32, w int, x *bf16Src, kRows bool, j0, cols, p0, kc int) bool {
	return false
}
