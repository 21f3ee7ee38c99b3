package report

import (
	"math"
	"os/exec"
	"strings"
	"testing"
)

func TestFormatDigits(t *testing.T) {
	for _, c := range []struct {
		v      float64
		digits int
		want   string
	}{
		{0.455851, 4, "0.4559"},
		{-0.751791, 4, "-0.7518"},
		{12, 4, "12.00"},
		{123456.7, 4, "123457"},
		{9.99996, 4, "10.00"}, // rounding carries into the next decade
		{0.001, 4, "0.001000"},
		{0.00047, 4, "4.700e-04"},
		{1.5e7, 4, "1.500e+07"},
		{-2.5e-300, 2, "-2.5e-300"},
		{0, 4, "0"},
		{math.NaN(), 4, "NaN"},
		{math.Inf(1), 4, "+Inf"},
		{math.Inf(-1), 4, "-Inf"},
		{0.5, 0, "0.5"},
	} {
		if got := FormatDigits(c.v, c.digits); got != c.want {
			t.Errorf("FormatDigits(%v, %d) = %q, want %q", c.v, c.digits, got, c.want)
		}
	}
	if Format(1/3.0) != "0.3333" {
		t.Errorf("Format(1/3) = %q", Format(1/3.0))
	}
}

func TestFormatPM(t *testing.T) {
	for _, c := range []struct {
		v, err float64
		want   string
	}{
		{0.455862, 0.000357, "0.45586 ± 0.00036"},
		{0.5, 0.0312, "0.500 ± 0.031"},
		{12345, 123, "12350 ± 120"},
		{0.4558508656, 3.5e-13, "0.4558508656 ± 3.5e-13"},
		{1, 0, "1.000 ± 0"},
		{math.NaN(), 0.1, "NaN ± 0.10"},
	} {
		if got := FormatPM(c.v, c.err); got != c.want {
			t.Errorf("FormatPM(%v, %v) = %q, want %q", c.v, c.err, got, c.want)
		}
	}
}

// ShellQuote's output, split by a real shell, gives back the arguments.
func TestShellQuoteRoundTripsThroughSh(t *testing.T) {
	args := []string{"go", "run", "./examples/x", "-out", "dir with space", "it's", "", "$HOME", "a*b", `back\slash`, "-lr=1e-3"}
	line := ShellQuote(args...)
	if !strings.HasPrefix(line, "go run ./examples/x -out 'dir with space'") || strings.Contains(line, "'-lr=1e-3'") {
		t.Errorf("ShellQuote = %s: safe arguments should stay unquoted", line)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	script := "for a in " + ShellQuote(args...) + `; do printf '[%s]\n' "$a"; done`
	out, err := exec.Command(sh, "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, a := range args {
		want.WriteString("[" + a + "]\n")
	}
	if string(out) != want.String() {
		t.Errorf("sh split %s into\n%s\nwant\n%s", line, out, want.String())
	}
}

func TestCommandLine(t *testing.T) {
	const mod = "github.com/geluproject/gelu"
	for _, c := range []struct {
		args      []string
		pkg, want string
	}{
		{[]string{"/tmp/go-build123/b001/exe/activations", "-seed", "2"}, mod + "/examples/activations", "go run ./examples/activations -seed 2"},
		{[]string{"/tmp/go-build9/b001/exe/gelu"}, mod, "go run ."},
		// Go ≥ 1.24 runs cached `go run` binaries from the build cache.
		{[]string{"/root/.cache/go-build/b1/b1050434520b374d70f9a7c520679790cb2b7c6e7f54198a3c439d2ba3aebc63-d/gelu-vs-relu", "-epochs", "1"},
			mod + "/examples/gelu-vs-relu", "go run ./examples/gelu-vs-relu -epochs 1"},
		{[]string{"/home/u/bin/b1/notahash-d/tool"}, mod + "/examples/x", "/home/u/bin/b1/notahash-d/tool"},
		{[]string{"./activations", "-out", "my dir"}, mod + "/examples/activations", "./activations -out 'my dir'"},
		{nil, mod, "(unknown command)"},
	} {
		if got := commandLine(c.args, c.pkg, mod); got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// Integer cells of every supported width are their decimal digits in
// markdown and CSV, and the value itself in JSON.
func TestIntegerCells(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{int(-7), "-7"}, {int64(math.MinInt64), "-9223372036854775808"}, {int32(math.MinInt32), "-2147483648"},
		{uint(7), "7"}, {uint64(math.MaxUint64), "18446744073709551615"}, {uint32(math.MaxUint32), "4294967295"},
	} {
		md, csv, js, err := cell(c.v, 3)
		if err != nil || md != c.want || csv != c.want || js != c.v {
			t.Errorf("cell(%T %v) = %q, %q, %v, %v; want %q twice and the value", c.v, c.v, md, csv, js, err, c.want)
		}
	}
}
