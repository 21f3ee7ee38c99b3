package testutil_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/train/internal/testutil"
	"github.com/geluproject/gelu/train/report"
)

// A rewrite that fails halfway leaves the old file and nothing else. The
// body is the package documentation's sketch.
func TestFailedRewriteLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := report.WriteFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, `{"half": `)
		return errors.New("disk full")
	})
	if names := testutil.ListDir(t, dir); err == nil || len(names) != 1 {
		t.Errorf("a failed rewrite: error %v, files %v; want an error and summary.json alone", err, names)
	}
}
