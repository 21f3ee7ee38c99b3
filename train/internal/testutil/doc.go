// Package testutil holds helpers shared by the tests of the train packages
// (train, train/report, train/internal/atomicfile, ...), which cannot share
// test files across packages.
//
// Use in a test (TestFailedRewriteLeavesNoTemporaryFile):
//
//	dir := t.TempDir()
//	path := filepath.Join(dir, "summary.json")
//	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
//		t.Fatal(err)
//	}
//	err := report.WriteFileAtomic(path, func(w io.Writer) error {
//		io.WriteString(w, `{"half": `)
//		return errors.New("disk full")
//	})
//	if names := testutil.ListDir(t, dir); err == nil || len(names) != 1 {
//		t.Errorf("a failed rewrite: error %v, files %v; want an error and summary.json alone", err, names)
//	}
package testutil
