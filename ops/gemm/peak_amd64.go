//go:build amd64 && !noasm

package gemm

//go:generate sh -c "cd asm && go run ./peak -out ../peak_amd64.s -stubs ../peak_stubs_amd64.go -pkg gemm"

// peakLoops are the FMA loops by the name of the own GEMM's path whose
// vector width they use.
var peakLoops = map[string]peakLoop{
	"avx512": {label: "AVX-512 FMA on zmm", vecBytes: 64, s: peakFMAS512, d: peakFMAD512},
	"avx2":   {label: "AVX2 FMA on ymm", vecBytes: 32, s: peakFMAS256, d: peakFMAD256},
}
