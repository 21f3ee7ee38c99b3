package optim_test

import (
	"os"
	"strings"
	"testing"
)

// The package documentation's sketch is Example_nanoGPT's loop, line for
// line, so that the sketch compiles and its output is checked.
func TestDocSketchIsExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	// The sketch is the first run of "//\t" lines.
	var sketch []string
	for _, line := range strings.Split(string(doc), "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			sketch = append(sketch, "\t"+code)
		} else if len(sketch) > 0 {
			break
		}
	}
	if len(sketch) < 10 {
		t.Fatalf("no sketch in doc.go (%d lines)", len(sketch))
	}
	if !strings.Contains(string(ex), strings.Join(sketch, "\n")+"\n") {
		t.Fatalf("doc.go's sketch is not a run of lines of example_test.go:\n%s", strings.Join(sketch, "\n"))
	}
}
