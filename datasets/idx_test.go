package datasets_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

// idxBytes builds an IDX file: magic, dims, then data.
func idxBytes(magic uint32, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(data)
	return b.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// images returns n images of rows×cols with pixel k of image i = (7i+k) mod 256.
func images(n, rows, cols int) []byte {
	b := make([]byte, n*rows*cols)
	for i := range n {
		for k := range rows * cols {
			b[i*rows*cols+k] = byte((7*i + k) % 256)
		}
	}
	return b
}

func TestLoadIDXPlainAndGzip(t *testing.T) {
	dir := t.TempDir()
	pix := images(3, 2, 4)
	img := idxBytes(2051, []uint32{3, 2, 4}, pix)
	lab := idxBytes(2049, []uint32{3}, []byte{2, 0, 1})
	for _, compress := range []bool{false, true} {
		enc := func(b []byte) []byte { return b }
		if compress {
			enc = gz
		}
		// The name does not decide: a gzip file without .gz and a plain
		// file named .gz both load.
		ip := writeFile(t, dir, "img.gz", enc(img))
		lp := writeFile(t, dir, "lab", enc(lab))
		d, err := datasets.LoadIDX(ip, lp, 3)
		if err != nil {
			t.Fatalf("compress=%v: %v", compress, err)
		}
		if d.Len() != 3 || d.Features != 8 || d.Classes != 3 || d.Labels[0] != 2 || d.Labels[2] != 1 {
			t.Fatalf("compress=%v: got %d×%d, labels %v", compress, d.Len(), d.Features, d.Labels)
		}
		for k, p := range pix {
			if d.X[k] != float32(p)/255 {
				t.Fatalf("pixel %d = %v, want %d/255", k, d.X[k], p)
			}
		}
		if err := d.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func TestIDXRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	goodImg := idxBytes(2051, []uint32{3, 2, 2}, images(3, 2, 2))
	goodLab := idxBytes(2049, []uint32{3}, []byte{0, 1, 2})
	lp := writeFile(t, dir, "good-labels", goodLab)
	ip := writeFile(t, dir, "good-images", goodImg)
	truncGz := gz(idxBytes(2051, []uint32{300, 8, 8}, images(300, 8, 8)))
	truncGz = truncGz[:len(truncGz)/2] // cut inside the deflate stream
	badCRC := gz(goodImg)
	badCRC[len(badCRC)-6] ^= 0xff // the CRC-32 is in the last 8 bytes

	type badFile struct {
		name string
		data []byte
		want []string // substrings of the error, which also names the file
	}
	// refused writes each case's data to a file named kind, loads it with
	// load and wants the error.
	refused := func(kind string, cases []badFile, load func(path string) error) {
		for _, c := range cases {
			p := writeFile(t, dir, kind, c.data)
			err := load(p)
			if err == nil {
				t.Errorf("%s: no error", c.name)
				continue
			}
			wantErr(t, err, append(c.want, p)...)
		}
	}
	refused("images", []badFile{
		{"empty", nil, []string{"file is empty", "magic number 2051"}},
		{"empty gzip", gz(nil), []string{"no data"}},
		{"short header", goodImg[:10], []string{"truncated header: 10 bytes, want 16"}},
		{"label file", goodLab, []string{"magic number 2049", "IDX label file", "want an IDX image file, magic number 2051"}},
		{"garbage", []byte("%PDF-1.4 not an idx file"), []string{"magic number"}},
		{"truncated", goodImg[:len(goodImg)-3], []string{"truncated: 9 bytes of data, want 12", "3 images of 2×2"}},
		{"truncated gzip", truncGz, []string{"compressed stream ends after", "want 19200 for 300 images of 8×8"}},
		{"gzip without trailer", gz(goodImg)[:len(gz(goodImg))-4], []string{"ends before its checksum"}},
		{"bad checksum", badCRC, []string{"corrupt gzip"}},
		{"extra data", append(bytes.Clone(goodImg), 1), []string{"data continues after the 12 bytes"}},
		{"no images", idxBytes(2051, []uint32{0, 2, 2}, nil), []string{"declares 0 images"}},
		{"zero size", idxBytes(2051, []uint32{3, 0, 2}, nil), []string{"images of 0×2"}},
		{"huge header", idxBytes(2051, []uint32{1 << 31, 1 << 16, 1 << 16}, nil), []string{"more than"}},
	}, func(p string) error { _, err := datasets.LoadIDX(p, lp, 3); return err })
	refused("labels", []badFile{
		{"image file", goodImg, []string{"magic number 2051", "IDX image file"}},
		{"count mismatch", idxBytes(2049, []uint32{2}, []byte{0, 1}), []string{"has 3 images but", "has 2 labels"}},
		{"label too large", idxBytes(2049, []uint32{3}, []byte{0, 3, 1}), []string{"label 3 at index 1", "want 0 ≤ label < 3"}},
		{"truncated", idxBytes(2049, []uint32{3}, []byte{0}), []string{"truncated: 1 bytes of data, want 3"}},
	}, func(p string) error { _, err := datasets.LoadIDX(ip, p, 3); return err })
	_, err := datasets.LoadIDX(filepath.Join(dir, "missing"), lp, 3)
	wantErr(t, err, "missing", "no such file")
}

// A directory of MNIST-named files, under each accepted naming.
func TestMNISTFromDirectory(t *testing.T) {
	for _, naming := range []struct{ img, lab string }{
		{"%s-images-idx3-ubyte.gz", "%s-labels-idx1-ubyte.gz"},
		{"%s-images-idx3-ubyte", "%s-labels-idx1-ubyte"},
		{"%s-images.idx3-ubyte", "%s-labels.idx1-ubyte"},
	} {
		dir := t.TempDir()
		for _, c := range []struct {
			prefix string
			n      int
		}{{"train", 5}, {"t10k", 2}} {
			labels := make([]byte, c.n)
			for i := range labels {
				labels[i] = byte(9 - i)
			}
			writeFile(t, dir, fmt.Sprintf(naming.img, c.prefix), gz(idxBytes(2051, []uint32{uint32(c.n), 28, 28}, images(c.n, 28, 28))))
			writeFile(t, dir, fmt.Sprintf(naming.lab, c.prefix), idxBytes(2049, []uint32{uint32(c.n)}, labels))
		}
		train, test, err := datasets.MNIST(dir)
		if err != nil {
			t.Fatal(err)
		}
		if train.Len() != 5 || test.Len() != 2 || train.Features != 784 || train.Labels[4] != 5 || len(train.ClassNames) != 10 {
			t.Errorf("%s: train %d, test %d, features %d, labels %v", naming.img, train.Len(), test.Len(), train.Features, train.Labels)
		}
		if train.Name != "MNIST train" || test.Name != "MNIST test" {
			t.Errorf("names %q, %q", train.Name, test.Name)
		}
	}

	dir := t.TempDir()
	_, _, err := datasets.MNIST(dir)
	wantErr(t, err, "train-images-idx3-ubyte.gz, train-images-idx3-ubyte, train-images.idx3-ubyte", dir)

	// Right format, wrong image size.
	writeFile(t, dir, "train-images-idx3-ubyte", idxBytes(2051, []uint32{1, 27, 28}, images(1, 27, 28)))
	writeFile(t, dir, "train-labels-idx1-ubyte", idxBytes(2049, []uint32{1}, []byte{1}))
	_, _, err = datasets.MNIST(dir)
	wantErr(t, err, "images are 27×28, want 28×28")
	// Labels must be digits.
	writeFile(t, dir, "train-images-idx3-ubyte", idxBytes(2051, []uint32{1, 28, 28}, images(1, 28, 28)))
	writeFile(t, dir, "train-labels-idx1-ubyte", idxBytes(2049, []uint32{1}, []byte{10}))
	_, _, err = datasets.MNIST(dir)
	wantErr(t, err, "label 10 at index 0", "want 0 ≤ label < 10")
	_, _, err = datasets.FashionMNIST(dir)
	wantErr(t, err, "datasets.FashionMNIST", "label 10")
}
