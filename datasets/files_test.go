package datasets_test

// Hostile files: devices, FIFOs, directories, headers that lie about the
// size, gzip streams that go on after the declared data. Each must give a
// clear error quickly, without allocating what the header claims.

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/geluproject/gelu/datasets"
)

// within runs f and fails the test if it has not returned after d (a read
// that never ends, or an open that blocks), instead of hanging the suite.
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
		return nil
	}
}

// allocated returns the bytes f allocates (the heap's cumulative count, so
// memory freed during f still counts).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// specialFiles returns paths that are not regular files: a symlink to
// /dev/zero (endless zeros), a directory and, where supported, a FIFO
// (opening it blocks until a writer appears).
func specialFiles(t *testing.T) map[string]string {
	dir := t.TempDir()
	files := map[string]string{"directory": dir}
	if _, err := os.Stat("/dev/zero"); err == nil {
		p := filepath.Join(dir, "zero-link")
		if err := os.Symlink("/dev/zero", p); err == nil {
			files["symlink to /dev/zero"] = p
		}
	}
	if p, ok := makeFIFO(t, dir); ok {
		files["FIFO"] = p
	}
	return files
}

func TestIDXRefusesNonRegularFiles(t *testing.T) {
	lp := writeFile(t, t.TempDir(), "labels", idxBytes(2049, []uint32{1}, []byte{0}))
	for what, p := range specialFiles(t) {
		err := within(t, 10*time.Second, func() error {
			_, err := datasets.LoadIDX(p, lp, 3)
			return err
		})
		wantErr(t, err, p, "not a regular file")
		err = within(t, 10*time.Second, func() error {
			_, err := datasets.ReadIDXLabels(p)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: ReadIDXLabels: %v, want an error saying it is not a regular file", what, err)
		}
	}
}

// zeroMembers returns n concatenated gzip members, each 1 MiB of zeros
// (about 1 KiB compressed).
func zeroMembers(n int) []byte {
	member := gz(make([]byte, 1<<20))
	return bytes.Repeat(member, n)
}

// A valid gzip IDX file followed by more gzip members: a reader that
// decompresses everything before checking would spend its time (and, if it
// kept the data, its memory) on a bomb. The first byte past the declared
// data must stop it.
func TestIDXGzipTrailingMembers(t *testing.T) {
	dir := t.TempDir()
	lp := writeFile(t, dir, "labels", idxBytes(2049, []uint32{3}, []byte{0, 1, 2}))
	valid := gz(idxBytes(2051, []uint32{3, 2, 2}, images(3, 2, 2)))

	// One empty member after the data is harmless (gzip allows it).
	p := writeFile(t, dir, "empty-member", append(bytes.Clone(valid), gz(nil)...))
	if _, err := datasets.LoadIDX(p, lp, 3); err != nil {
		t.Errorf("an empty trailing member: %v", err)
	}

	bomb := append(bytes.Clone(valid), zeroMembers(10<<10)...) // ~10 MiB compressed, 10 GiB of zeros
	t.Logf("bomb: %d bytes compressed, %d GiB decompressed", len(bomb), 10)
	p = writeFile(t, dir, "bomb", bomb)
	var err error
	start := time.Now()
	n := allocated(func() {
		err = within(t, 60*time.Second, func() error {
			_, err := datasets.LoadIDX(p, lp, 3)
			return err
		})
	})
	wantErr(t, err, p, "data continues after the 12 bytes")
	if n > 8<<20 {
		t.Errorf("allocated %d bytes refusing the bomb, want under 8 MiB", n)
	}
	t.Logf("refused in %v, %d bytes allocated", time.Since(start), n)
}

// A header declaring far more data than the file can hold is refused before
// a buffer of the declared size exists.
func TestIDXHeaderCheckedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	lp := writeFile(t, dir, "labels", idxBytes(2049, []uint32{1}, []byte{0}))
	lie := idxBytes(2051, []uint32{60000, 28, 28}, images(1, 28, 28)) // 47 MB declared, 784 present
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"plain", lie, "truncated: 784 bytes of data, want 47040000"},
		// 47 MB cannot come out of a gzip file of under 2 KB: deflate
		// expands at most 1032-fold.
		{"gzip", gz(lie), "decompresses to at most"},
	}
	for _, c := range cases {
		p := writeFile(t, dir, c.name, c.data)
		var err error
		n := allocated(func() { _, err = datasets.LoadIDX(p, lp, 10) })
		wantErr(t, err, p, c.want)
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes for a file of %d, want under 1 MiB", c.name, n, len(c.data))
		}
	}
}

// Sizes are computed without overflow: 2³²−1 squared does not fit an int64
// and must not wrap into a small or negative size.
func TestIDXSizeOverflow(t *testing.T) {
	dir := t.TempDir()
	for _, dims := range [][]uint32{
		{1, 1<<32 - 1, 1<<32 - 1},
		{1<<32 - 1, 1<<32 - 1, 1<<32 - 1},
		{1<<32 - 1, 1 << 16, 1 << 16},
	} {
		p := writeFile(t, dir, "images", idxBytes(2051, dims, images(1, 2, 2)))
		_, _, _, _, err := datasets.ReadIDXImages(p)
		wantErr(t, err, "more than datasets.MaxIDXBytes")
	}
}

func TestMaxIDXBytesIsConfigurable(t *testing.T) {
	dir := t.TempDir()
	ip := writeFile(t, dir, "images", gz(idxBytes(2051, []uint32{3, 2, 2}, images(3, 2, 2))))
	lp := writeFile(t, dir, "labels", idxBytes(2049, []uint32{3}, []byte{0, 1, 2}))
	defer func(old int64) { datasets.MaxIDXBytes = old }(datasets.MaxIDXBytes)
	datasets.MaxIDXBytes = 11
	_, err := datasets.LoadIDX(ip, lp, 3)
	wantErr(t, err, "3 images of 2×2", "more than datasets.MaxIDXBytes = 11")
	datasets.MaxIDXBytes = 12
	if _, err := datasets.LoadIDX(ip, lp, 3); err != nil {
		t.Errorf("12 bytes with MaxIDXBytes 12: %v", err)
	}
}

func TestLoadTextRefusesNonRegularFiles(t *testing.T) {
	for what, p := range specialFiles(t) {
		err := within(t, 10*time.Second, func() error {
			_, err := datasets.LoadText(p)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming %s as not a regular file", what, err, p)
		}
	}
}

func TestMaxTextBytesIsConfigurable(t *testing.T) {
	text := strings.Repeat("hello, world ", 1<<16) // 851968 bytes
	p := writeFile(t, t.TempDir(), "text", []byte(text))
	defer func(old int64) { datasets.MaxTextBytes = old }(datasets.MaxTextBytes)
	datasets.MaxTextBytes = int64(len(text)) - 1
	var err error
	n := allocated(func() { _, err = datasets.LoadText(p) })
	wantErr(t, err, p, "851968 bytes", "more than datasets.MaxTextBytes = 851967")
	if n > 64<<10 {
		t.Errorf("allocated %d bytes refusing a file of %d, want it refused before reading", n, len(text))
	}
	datasets.MaxTextBytes = int64(len(text))
	if s, err := datasets.LoadText(p); err != nil || s != text {
		t.Errorf("LoadText: %d bytes, %v with the limit at the file size", len(s), err)
	}
}
