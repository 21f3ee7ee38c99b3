package report

// CSV output: whole tables (WriteCSV) and row-by-row logs such as per-step
// training metrics (CreateCSV). Numbers are written at full precision.

import (
	"encoding/csv"
	"fmt"
)

// CSVWriter writes a CSV file row by row, e.g. one row of metrics per
// training step. The file appears at its path, complete, only when Close
// succeeds; until then it is a hidden temporary file beside it.
type CSVWriter struct {
	f      *AtomicFile
	w      *csv.Writer
	header []string
	rows   int
	err    error
	closed bool
}

// CreateCSV starts the CSV file at path with the given column names, which
// must be non-empty and distinct.
func CreateCSV(path string, header ...string) (*CSVWriter, error) {
	if err := checkHeader(header); err != nil {
		return nil, fmt.Errorf("report.CreateCSV %s: %w", path, err)
	}
	f, err := CreateAtomic(path)
	if err != nil {
		return nil, err
	}
	c := &CSVWriter{f: f, w: csv.NewWriter(f), header: append([]string(nil), header...)}
	if err := c.w.Write(header); err != nil {
		f.Abort()
		return nil, fmt.Errorf("report.CreateCSV %s: %w", path, err)
	}
	return c, nil
}

func checkHeader(header []string) error {
	if len(header) == 0 {
		return fmt.Errorf("no columns")
	}
	seen := map[string]bool{}
	for i, h := range header {
		if h == "" {
			return fmt.Errorf("column %d has an empty name", i)
		}
		if seen[h] {
			return fmt.Errorf("column name %q appears twice", h)
		}
		seen[h] = true
	}
	return nil
}

// Write appends one row; it needs one cell per column. Cells may be
// strings, numbers (written at full precision, NaN as "NaN", infinities as
// "+Inf"/"-Inf"), bools, nil (empty) or fmt.Stringers.
func (c *CSVWriter) Write(cells ...any) error {
	if c == nil {
		return errNil("CSVWriter", "report.CreateCSV")
	}
	if c.closed {
		return fmt.Errorf("report: CSV %s: Write after Close", c.f.Path())
	}
	if c.err != nil {
		return c.err
	}
	rec, err := csvRecord(cells, len(c.header), c.rows+1)
	if err == nil {
		err = c.w.Write(rec)
	}
	if err != nil {
		c.err = fmt.Errorf("report: CSV %s: %w", c.f.Path(), err)
		return c.err
	}
	c.rows++
	return nil
}

func csvRecord(cells []any, ncol, row int) ([]string, error) {
	if len(cells) != ncol {
		return nil, fmt.Errorf("row %d has %d cells, want %d (one per column)", row, len(cells), ncol)
	}
	rec := make([]string, ncol)
	for i, v := range cells {
		_, s, _, err := cell(v, DefaultDigits)
		if err != nil {
			return nil, fmt.Errorf("row %d column %d: %w", row, i, err)
		}
		rec[i] = s
	}
	return rec, nil
}

// Rows returns the number of rows written so far (without the header).
func (c *CSVWriter) Rows() int {
	if c == nil {
		return 0
	}
	return c.rows
}

// Path returns the file's final path.
func (c *CSVWriter) Path() string {
	if c == nil {
		return ""
	}
	return c.f.Path()
}

// Close commits the file. If an earlier Write failed, the file is discarded
// and that error is returned.
func (c *CSVWriter) Close() error {
	if c == nil {
		return errNil("CSVWriter", "report.CreateCSV")
	}
	if c.closed {
		return c.err
	}
	c.closed = true
	if c.err == nil {
		c.w.Flush()
		c.err = c.w.Error()
	}
	if c.err != nil {
		c.f.Abort()
		return c.err
	}
	c.err = c.f.Commit()
	return c.err
}

// Abort discards the file.
func (c *CSVWriter) Abort() error {
	if c == nil {
		return errNil("CSVWriter", "report.CreateCSV")
	}
	c.closed = true
	return c.f.Abort()
}

// WriteCSV writes a whole table to path atomically.
func WriteCSV(path string, header []string, rows [][]any) error {
	c, err := CreateCSV(path, header...)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := c.Write(r...); err != nil {
			c.Abort()
			return err
		}
	}
	return c.Close()
}
