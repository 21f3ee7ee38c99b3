// Package testutil holds helpers shared by the tests of the train packages
// (train, train/report, train/internal/atomicfile, ...), which cannot share
// test files across packages.
//
// Use in a test:
//
//	if names := testutil.ListDir(t, dir); len(names) != 1 {
//		t.Errorf("temporary files left behind: %v", names)
//	}
package testutil
