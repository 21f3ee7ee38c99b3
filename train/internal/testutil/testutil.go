package testutil

import (
	"os"
	"testing"
)

// ListDir returns the names in dir, in directory order as os.ReadDir sorts
// them (by name), to catch leftover temporary files. A read error fails t.
func ListDir(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
