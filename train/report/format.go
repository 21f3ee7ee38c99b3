package report

// Number and command-line formatting shared by tables, text and summaries,
// so that every number in a report reads the same way.

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultDigits is the number of significant digits of numbers in markdown.
// CSV files and summary.json always carry full precision.
const DefaultDigits = 4

// Format formats v with DefaultDigits significant digits (see FormatDigits).
func Format(v float64) string { return FormatDigits(v, DefaultDigits) }

// FormatDigits formats v with the given number of significant digits:
// plainly when 0.001 ≤ |v| < 10⁶ (0.4559, −0.7518, 12.00, 123457), in
// exponent form otherwise (4.700e-04, 1.235e+07). Zero is "0"; NaN and
// infinities are "NaN", "+Inf" and "-Inf". digits below 1 count as 1.
func FormatDigits(v float64, digits int) string {
	digits = max(digits, 1)
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0"
	}
	e := exponent(v, digits)
	if e < -3 || e >= 6 {
		return strconv.FormatFloat(v, 'e', digits-1, 64)
	}
	return strconv.FormatFloat(v, 'f', max(0, digits-1-e), 64)
}

// exponent returns the decimal exponent of v after rounding to digits
// significant digits (9.9996 with 4 digits has exponent 1, not 0).
func exponent(v float64, digits int) int {
	s := strconv.FormatFloat(v, 'e', digits-1, 64)
	e, _ := strconv.Atoi(s[strings.LastIndexByte(s, 'e')+1:])
	return e
}

// FormatPM formats a value with its uncertainty as "v ± err", err rounded to
// two significant digits and v to the same decimal place: 0.45586 ± 0.00036.
// When err is tiny compared with v (a quadrature error, say), v gets 10
// significant digits and err 2: 0.4558508656 ± 3.5e-13.
func FormatPM(v, err float64) string {
	if math.IsNaN(err) || math.IsInf(err, 0) || err <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return Format(v) + " ± " + FormatDigits(err, 2)
	}
	dec := 1 - exponent(err, 2) // decimals that keep two digits of err
	if dec > 10 || (v != 0 && exponent(v, 1)+dec > 12) {
		return FormatDigits(v, 10) + " ± " + FormatDigits(err, 2)
	}
	if dec < 0 {
		scale := math.Pow(10, float64(-dec))
		return strconv.FormatFloat(math.Round(v/scale)*scale, 'f', 0, 64) + " ± " +
			strconv.FormatFloat(math.Round(err/scale)*scale, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', dec, 64) + " ± " + strconv.FormatFloat(err, 'f', dec, 64)
}

// safeArg matches arguments that need no quoting in a POSIX shell.
var safeArg = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// ShellQuote joins args into one line a POSIX shell splits back into the
// same arguments: safe ones as they are, others in single quotes.
func ShellQuote(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if safeArg.MatchString(a) {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// CommandLine returns the shell command that reproduces a run with the
// given os.Args. A program started by `go run` lives in a temporary build
// directory; it is shown as `go run ./pkg/dir` relative to the module root
// (taken from the binary's build information), so the line is both
// reproducible and the same on every run.
func CommandLine(args []string) string {
	var pkg, mod string
	if bi, ok := debug.ReadBuildInfo(); ok {
		pkg, mod = bi.Path, bi.Main.Path
	}
	return commandLine(args, pkg, mod)
}

// commandLine is CommandLine for a main package pkg in module mod.
func commandLine(args []string, pkg, mod string) string {
	if len(args) == 0 {
		return "(unknown command)"
	}
	p := filepath.ToSlash(args[0])
	if isGoRunBinary(p) && pkg != "" && (pkg == mod || strings.HasPrefix(pkg, mod+"/")) {
		dir := "." + strings.TrimPrefix(pkg, mod) // "." or "./examples/x"
		return ShellQuote(append([]string{"go", "run", dir}, args[1:]...)...)
	}
	return ShellQuote(args...)
}

// goRunCached matches where Go 1.24 and later keep `go run` executables in
// the build cache: $GOCACHE/<2 hex>/<64 hex>-d/<name>.
var goRunCached = regexp.MustCompile(`/[0-9a-f]{2}/[0-9a-f]{64}-d/[^/]+$`)

// isGoRunBinary reports whether an executable path is one `go run` made:
// in a temporary .../go-build.../exe/ directory (older Go), or in the
// build cache.
func isGoRunBinary(p string) bool {
	return (strings.Contains(p, "/go-build") && strings.Contains(p, "/exe/")) || goRunCached.MatchString(p)
}

// cell formats one table cell for markdown (rounded to digits) and for CSV
// (full precision: strconv's shortest representation that round-trips),
// and converts it to its summary.json value.
func cell(v any, digits int) (md, csv string, js any, err error) {
	switch x := v.(type) {
	case nil:
		return "", "", nil, nil
	case string:
		return x, x, x, nil
	case float64:
		return FormatDigits(x, digits), strconv.FormatFloat(x, 'g', -1, 64), jsonFloat(x), nil
	case float32:
		return FormatDigits(float64(x), digits), strconv.FormatFloat(float64(x), 'g', -1, 32), jsonFloat(float64(x)), nil
	case int, int64, int32, uint, uint64, uint32:
		s := fmt.Sprint(x) // decimal, as strconv formats each
		return s, s, x, nil
	case bool:
		s := strconv.FormatBool(x)
		return s, s, x, nil
	case fmt.Stringer:
		s := x.String()
		return s, s, s, nil
	}
	return "", "", nil, fmt.Errorf("unsupported cell type %T (want string, a number, bool, nil or a fmt.Stringer)", v)
}

// jsonFloat keeps finite floats as numbers and spells NaN and infinities as
// the strings "NaN", "+Inf", "-Inf", which JSON cannot hold as numbers.
func jsonFloat(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return FormatDigits(x, 1)
	}
	return x
}

// mdEscape makes s safe inside a markdown table cell.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
