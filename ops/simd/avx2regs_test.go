package simd

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// An AVX2 kernel must not touch vector registers 16-31: they exist only
// with AVX-512, so such a kernel assembles, passes every test on an AVX-512
// machine (GELU_KERNELS=avx2 included) and dies with an illegal instruction
// on the CPUs it is for. The generator refuses to write one; this checks
// the committed file.
func TestAVX2KernelsUseOnlyAVX2Registers(t *testing.T) {
	src, err := os.ReadFile("kernels_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	high := regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b|\bK[1-7]\b`)
	fn, kernels := "", 0
	for n, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			fn = line
			if strings.Contains(fn, "AVX2") {
				kernels++
			}
		}
		if strings.Contains(fn, "AVX2") && !strings.HasPrefix(strings.TrimSpace(line), "//") && high.MatchString(line) {
			t.Errorf("kernels_amd64.s:%d (%s): %s", n+1, strings.Fields(fn)[1], strings.TrimSpace(line))
		}
	}
	if kernels == 0 {
		t.Fatal("no AVX2 kernel found in kernels_amd64.s")
	}
}
