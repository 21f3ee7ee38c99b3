//go:build !linux && amd64 && !noasm

package gemm

// bf16AMXUsable: the AMX path is only enabled on Linux, where the process
// asks for the tile data with arch_prctl (bf16_amx_linux.go).
func bf16AMXUsable() (bool, string) { return false, "the AMX path is enabled on Linux only" }
