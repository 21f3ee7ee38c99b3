package gemm

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBF16EncodingsMatchGNUAs re-derives every instruction that
// bf16_amd64.s spells out in bytes (Go's assembler has no AVX512_BF16 or
// AMX mnemonics): each run of BYTE directives follows a comment
// "enc: <instruction in GNU syntax>", which GNU as assembles here; the
// bytes objdump shows for it must be those of the file, and objdump must
// read them back as the same instruction. Skips where binutils is absent.
func TestBF16EncodingsMatchGNUAs(t *testing.T) {
	as, errAs := exec.LookPath("as")
	objdump, errObjdump := exec.LookPath("objdump")
	if errAs != nil || errObjdump != nil {
		t.Skip("GNU as and objdump (binutils) not installed")
	}
	src, err := os.ReadFile("bf16_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	type enc struct {
		att   string
		bytes []byte
	}
	var encs []enc
	byteRe := regexp.MustCompile(`^\s*BYTE\s+\$0x([0-9a-f]{2})\s*$`)
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if att, ok := strings.CutPrefix(strings.TrimSpace(line), "// enc: "); ok {
			encs = append(encs, enc{att: att})
			continue
		}
		if m := byteRe.FindStringSubmatch(line); m != nil {
			if len(encs) == 0 {
				t.Fatalf("BYTE before any enc: comment: %q", line)
			}
			b, _ := strconv.ParseUint(m[1], 16, 8)
			last := &encs[len(encs)-1]
			last.bytes = append(last.bytes, byte(b))
		}
	}
	// Every distinct instruction once, in the order of first use.
	seen := map[string][]byte{}
	var unique []enc
	for _, e := range encs {
		if len(e.bytes) == 0 {
			t.Fatalf("%q: no BYTE follows", e.att)
		}
		if prev, ok := seen[e.att]; ok {
			if !bytes.Equal(prev, e.bytes) {
				t.Fatalf("%q encoded two ways: % x and % x", e.att, prev, e.bytes)
			}
			continue
		}
		seen[e.att] = e.bytes
		unique = append(unique, e)
	}
	if len(unique) < 10 {
		t.Fatalf("only %d encoded instructions found in bf16_amd64.s", len(unique))
	}
	dir := t.TempDir()
	var text strings.Builder
	for _, e := range unique {
		text.WriteString(e.att + "\n")
	}
	sPath, oPath := filepath.Join(dir, "enc.s"), filepath.Join(dir, "enc.o")
	if err := os.WriteFile(sPath, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", oPath, sPath).CombinedOutput(); err != nil {
		t.Fatalf("as --64: %v\n%s", err, out)
	}
	out, err := exec.Command(objdump, "-d", oPath).Output()
	if err != nil {
		t.Fatalf("objdump -d: %v", err)
	}
	// Lines like "   6:	62 f2 76 48 52 d0    	vdpbf16ps %zmm0,%zmm1,%zmm2".
	lineRe := regexp.MustCompile(`^\s*[0-9a-f]+:\t([0-9a-f ]+)\t(.*)$`)
	var got []enc
	for _, line := range strings.Split(string(out), "\n") {
		m := lineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var bs []byte
		for _, f := range strings.Fields(m[1]) {
			b, _ := strconv.ParseUint(f, 16, 8)
			bs = append(bs, byte(b))
		}
		got = append(got, enc{att: strings.Join(strings.Fields(m[2]), " "), bytes: bs})
	}
	if len(got) != len(unique) {
		t.Fatalf("objdump shows %d instructions for %d assembled:\n%s", len(got), len(unique), out)
	}
	for i, e := range unique {
		if !bytes.Equal(got[i].bytes, e.bytes) {
			t.Errorf("%s: bf16_amd64.s has % x, GNU as gives % x", e.att, e.bytes, got[i].bytes)
		}
		if want := strings.Join(strings.Fields(e.att), " "); got[i].att != want {
			t.Errorf("% x: objdump reads %q, the comment says %q", e.bytes, got[i].att, want)
		}
	}
	if !t.Failed() {
		t.Logf("%d distinct encodings (%d uses) match GNU as", len(unique), len(encs))
	}
}
