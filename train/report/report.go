package report

// The Report type: collects text, tables, plots, summary values and checked
// claims in call order, writes tables and plots as it goes, and writes
// summary.json, claims.csv and report.md on Close.

import (
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Report is an experiment's output folder being written. It is not safe
// for concurrent use. Methods that can fail return an error and also keep
// the first one, which Close returns: a program may check each call or
// only Close. After an error the report is still written, with the errors
// listed in a section of report.md, so partial results are not lost.
type Report struct {
	dir, title, command string
	digits              int
	blocks              []string
	files               map[string]bool
	values              map[string]any
	docs                []keyDoc
	tables              map[string]tableJSON
	claims              []Claim
	csvs                []*CSVWriter
	errs                []error
	closed              bool
}

type keyDoc struct{ Pattern, Description string }

type tableJSON struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// Option configures New.
type Option func(*Report)

// WithCommand sets the command line shown at the top of report.md (argv as
// os.Args would hold it) instead of the process's own os.Args, e.g. in
// tests, which run in a temporary test binary.
func WithCommand(argv ...string) Option {
	return func(r *Report) { r.command = CommandLine(argv) }
}

// WithDigits sets the significant digits of numbers in markdown tables
// (default DefaultDigits). CSV and JSON always carry full precision.
func WithDigits(n int) Option { return func(r *Report) { r.digits = max(n, 1) } }

// New starts a report titled title in dir, creating dir if needed and
// checking that it is writable. The command line is taken from os.Args
// (see CommandLine) unless WithCommand is given. Files already in dir are
// left alone; those this report writes are replaced.
func New(dir, title string, opts ...Option) (*Report, error) {
	if dir == "" {
		return nil, fmt.Errorf("report.New: empty output directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report.New: cannot create output directory: %w", err)
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("report.New: output directory %s is not writable: %w", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	r := &Report{
		dir: dir, title: title, command: CommandLine(os.Args), digits: DefaultDigits,
		files:  map[string]bool{"report.md": true, "summary.json": true, "claims.csv": true},
		values: map[string]any{}, tables: map[string]tableJSON{},
	}
	for _, o := range opts {
		if o != nil { // a nil Option changes nothing
			o(r)
		}
	}
	return r, nil
}

// Dir returns the output directory.
func (r *Report) Dir() string {
	if r == nil {
		return ""
	}
	return r.dir
}

// Command returns the command line shown at the top of report.md.
func (r *Report) Command() string {
	if r == nil {
		return ""
	}
	return r.command
}

// Err returns the first error so far, or nil.
func (r *Report) Err() error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	if len(r.errs) == 0 {
		return nil
	}
	return r.errs[0]
}

func (r *Report) fail(err error) error {
	r.errs = append(r.errs, err)
	return err
}

// Text adds a markdown paragraph (or any markdown block).
func (r *Report) Text(markdown string) {
	if r == nil { // nothing to add to; the nil shows in Err and Close
		return
	}
	r.blocks = append(r.blocks, strings.TrimSpace(markdown))
}

// Section adds a second-level heading.
func (r *Report) Section(title string) { r.Text("## " + title) }

// fileName allows '+' for numbers printed with %g ("lr1e+21").
var fileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// claimFile reserves the output file name+ext, rejecting bad and repeated
// names.
func (r *Report) claimFile(what, name, ext string) (string, error) {
	if r.closed {
		return "", fmt.Errorf("report: %s %q after Close", what, name)
	}
	if !fileName.MatchString(name) {
		return "", fmt.Errorf("report: %s name %q, want letters, digits, '_', '-', '+' or '.', starting with a letter or digit", what, name)
	}
	f := name + ext
	if r.files[f] {
		return "", fmt.Errorf("report: %s %q: file %s is already part of this report", what, name, f)
	}
	r.files[f] = true
	return f, nil
}

// Table writes name.csv (full precision) and adds the table to report.md
// (numbers with the report's significant digits) with a link to the CSV,
// and to summary.json under "tables". Each row needs one cell per header
// entry; cells are strings, numbers, bools, nil or fmt.Stringers.
func (r *Report) Table(name string, header []string, rows [][]any) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	b, err := r.table(name, header, rows)
	if err != nil {
		return r.fail(err)
	}
	r.blocks = append(r.blocks, b)
	return nil
}

// table writes name.csv and returns the table's markdown block.
func (r *Report) table(name string, header []string, rows [][]any) (string, error) {
	f, err := r.claimFile("table", name, ".csv")
	if err != nil {
		return "", err
	}
	if err := checkHeader(header); err != nil {
		return "", fmt.Errorf("report: table %q: %w", name, err)
	}
	var md strings.Builder
	md.WriteString("| " + strings.Join(mapSlice(header, mdEscape), " | ") + " |\n|")
	md.WriteString(strings.Repeat(" --- |", len(header)) + "\n")
	tj := tableJSON{Columns: append([]string(nil), header...), Rows: make([][]any, len(rows))}
	for i, row := range rows {
		if len(row) != len(header) {
			return "", fmt.Errorf("report: table %q: row %d has %d cells, want %d (one per column)", name, i, len(row), len(header))
		}
		mds := make([]string, len(row))
		tj.Rows[i] = make([]any, len(row))
		for j, v := range row {
			m, _, js, err := cell(v, r.digits)
			if err != nil {
				return "", fmt.Errorf("report: table %q row %d column %q: %w", name, i, header[j], err)
			}
			mds[j], tj.Rows[i][j] = mdEscape(m), js
		}
		md.WriteString("| " + strings.Join(mds, " | ") + " |\n")
	}
	if err := WriteCSV(filepath.Join(r.dir, f), header, rows); err != nil {
		return "", err
	}
	r.tables[name] = tj
	return md.String() + "\n" + fmt.Sprintf("Data: [%s](%s)", f, f), nil
}

// CSV starts name.csv for rows written one at a time (per-step metrics)
// and links it from report.md. Close the writer when done; Report.Close
// closes it if it is still open.
func (r *Report) CSV(name string, header ...string) (*CSVWriter, error) {
	if r == nil {
		return nil, errNil("Report", "report.New")
	}
	f, err := r.claimFile("CSV", name, ".csv")
	if err != nil {
		return nil, r.fail(err)
	}
	c, err := CreateCSV(filepath.Join(r.dir, f), header...)
	if err != nil {
		return nil, r.fail(err)
	}
	r.csvs = append(r.csvs, c)
	r.blocks = append(r.blocks, fmt.Sprintf("Data: [%s](%s) (columns: %s)", f, f, strings.Join(header, ", ")))
	return c, nil
}

// Plot writes name.png and adds it to report.md with its caption and a
// note for every series with points that could not be drawn.
func (r *Report) Plot(name string, spec PlotSpec) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	b, err := r.plot(name, spec)
	if err != nil {
		return r.fail(err)
	}
	r.blocks = append(r.blocks, b)
	return nil
}

// plot writes name.png and returns its markdown block.
func (r *Report) plot(name string, spec PlotSpec) (string, error) {
	f, err := r.claimFile("plot", name, ".png")
	if err != nil {
		return "", err
	}
	notes, err := WritePlot(filepath.Join(r.dir, f), spec)
	if err != nil {
		return "", err
	}
	alt := spec.Title
	if alt == "" {
		alt = name
	}
	b := fmt.Sprintf("![%s](%s)", strings.ReplaceAll(alt, "]", ")"), f)
	if spec.Caption != "" {
		b += "\n\n" + spec.Caption
	}
	for _, n := range notes {
		b += "\n\nNote: " + n + "."
	}
	return b, nil
}

var keyRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:+-]*$`)

// Set records a summary value under key (letters, digits and "_.:+-", by
// convention dotted: "gelu.min_x"). Values are numbers, strings, bools or
// slices of them; NaN and infinities are stored as the strings "NaN",
// "+Inf", "-Inf". Every key must match a pattern given to Describe by the
// time Close runs. Setting a key twice is an error.
func (r *Report) Set(key string, value any) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	if r.closed {
		return r.fail(fmt.Errorf("report: Set %q after Close", key))
	}
	if !keyRe.MatchString(key) {
		return r.fail(fmt.Errorf("report: summary key %q, want letters, digits and '_.:+-'", key))
	}
	if _, dup := r.values[key]; dup {
		return r.fail(fmt.Errorf("report: summary key %q set twice", key))
	}
	v, err := jsonValue(value)
	if err != nil {
		return r.fail(fmt.Errorf("report: summary key %q: %w", key, err))
	}
	r.values[key] = v
	return nil
}

// Float returns a number set earlier with Set, so that later sections (the
// claims, say) can use what earlier ones measured without a second map.
func (r *Report) Float(key string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	switch v := r.values[key].(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case string: // how NaN and ±Inf are stored (JSON has no number for them)
		if f, err := strconv.ParseFloat(v, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return f, true
		}
	}
	return math.NaN(), false
}

// Get returns the number set under key, like Float, for code that reads
// many measurements back (the claims section, say): a key that was never
// set, or holds no number, gives NaN and is recorded as an error that
// Close returns, so that a typo in a key cannot read as 0 and pass a check
// unnoticed.
func (r *Report) Get(key string) float64 {
	if r == nil {
		return math.NaN()
	}
	v, ok := r.Float(key)
	if !ok {
		r.fail(fmt.Errorf("report: Get %q: no number was set under this key", key))
	}
	return v
}

// SetAll sets prefix+name to value for every entry of values, in sorted
// order of the names (see Set), and returns the first error.
func (r *Report) SetAll(prefix string, values map[string]float64) error {
	return setEach(r, prefix, values)
}

// SetValues is SetAll for values of any type Set takes (numbers,
// strings, bools, slices of them): it sets prefix+name to value for every
// entry, in sorted order of the names, and returns the first error.
//
//	r.SetValues("config.", map[string]any{"epochs": 3, "acts": []string{"relu", "gelu"}})
func (r *Report) SetValues(prefix string, values map[string]any) error {
	return setEach(r, prefix, values)
}

// setEach is SetAll and SetValues.
func setEach[V any](r *Report, prefix string, values map[string]V) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	var first error
	for _, k := range sortedKeys(values) {
		if err := r.Set(prefix+k, values[k]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func jsonValue(value any) (any, error) {
	switch x := value.(type) {
	case []float64:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = jsonFloat(v)
		}
		return out, nil
	case []int, []string, []bool:
		return x, nil
	case fmt.Stringer:
		return x.String(), nil
	}
	_, _, js, err := cell(value, DefaultDigits)
	if err != nil || value == nil {
		return nil, fmt.Errorf("unsupported value type %T (want a number, string, bool or a slice of them)", value)
	}
	return js, nil
}

// Describe documents the summary keys matching pattern (path.Match syntax,
// where * matches any run of characters: "*.min_x" covers "gelu.min_x").
// The descriptions are listed in report.md and summary.json.
func (r *Report) Describe(pattern, description string) error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	if _, err := path.Match(pattern, ""); err != nil || pattern == "" {
		return r.fail(fmt.Errorf("report: Describe: bad key pattern %q", pattern))
	}
	for _, d := range r.docs {
		if d.Pattern == pattern {
			return r.fail(fmt.Errorf("report: Describe: pattern %q described twice", pattern))
		}
	}
	r.docs = append(r.docs, keyDoc{pattern, strings.TrimSpace(description)})
	return nil
}

// Close finishes open CSV writers and writes claims.csv (if there are
// claims), summary.json and report.md. It returns the first error of the
// report's life, including a summary key that no Describe pattern covers.
func (r *Report) Close() error {
	if r == nil {
		return errNil("Report", "report.New")
	}
	if r.closed {
		return fmt.Errorf("report: Close called twice")
	}
	for _, c := range r.csvs {
		if err := c.Close(); err != nil { // already reported if the program closed it itself
			if !slices.ContainsFunc(r.errs, func(e error) bool { return e == err }) {
				r.fail(err)
			}
		}
	}
	var undocumented []string
	for _, k := range sortedKeys(r.values) {
		if !slices.ContainsFunc(r.docs, func(d keyDoc) bool { ok, _ := path.Match(d.Pattern, k); return ok }) {
			undocumented = append(undocumented, k)
		}
	}
	if len(undocumented) > 0 {
		r.fail(fmt.Errorf("report: summary keys without a Describe pattern: %s", strings.Join(undocumented, ", ")))
	}
	r.closed = true
	if len(r.claims) > 0 {
		rows := make([][]any, len(r.claims))
		for i, c := range r.claims {
			rows[i] = []any{c.Source, c.Claim, c.Measured, string(c.Verdict)}
		}
		if err := WriteCSV(filepath.Join(r.dir, "claims.csv"), []string{"source", "claim", "measured", "verdict"}, rows); err != nil {
			r.fail(err)
		}
	}
	if err := WriteFileAtomic(filepath.Join(r.dir, "summary.json"), r.writeSummary); err != nil {
		r.fail(err)
	}
	// report.md last: its presence means everything else was written.
	if err := WriteFileAtomic(filepath.Join(r.dir, "report.md"), r.writeMarkdown); err != nil {
		r.fail(err)
	}
	return r.Err()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func mapSlice(s []string, f func(string) string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}
