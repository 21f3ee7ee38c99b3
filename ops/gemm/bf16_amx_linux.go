//go:build linux && amd64 && !noasm

package gemm

import (
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Linux hands a process the AMX tile data registers (XFEATURE_XTILEDATA,
// 8 KiB of state per thread) only once asked: until then a tile
// instruction raises SIGILL. The request, made once per process the first
// time the bf16 path is chosen, is arch_prctl(ARCH_REQ_XCOMP_PERM, 18); a
// kernel older than 5.16, or one that cannot enlarge the signal frames of
// the process's threads, refuses, and then the AMX path is not used.
const (
	archGetXcompPerm  = 0x1022
	archReqXcompPerm  = 0x1023
	xfeatureXtiledata = 18
)

var bf16AMX struct {
	once sync.Once
	ok   bool
	why  string
}

// bf16AMXUsable reports whether the CPU has AMX-BF16 (and the AVX-512 the
// kernel's packing and epilogue use) and Linux granted the tile data.
func bf16AMXUsable() (bool, string) {
	bf16AMX.once.Do(func() {
		switch {
		case !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16:
			bf16AMX.why = "the CPU has no AMX-BF16"
		case !bf16HasAVX512BF16:
			bf16AMX.why = "the CPU has AMX-BF16 but no AVX512_BF16, which its packing uses"
		default:
			if _, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0); errno != 0 {
				bf16AMX.why = fmt.Sprintf("Linux refused the AMX tile data: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): %v", errno)
				return
			}
			var perm uint64
			if _, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&perm)), 0); errno != 0 || perm&(1<<xfeatureXtiledata) == 0 {
				bf16AMX.why = fmt.Sprintf("Linux did not grant the AMX tile data (ARCH_GET_XCOMP_PERM: %#x, %v)", perm, errno)
				return
			}
			bf16AMX.ok = true
		}
	})
	return bf16AMX.ok, bf16AMX.why
}
