package datasets_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/datasets"
)

// FuzzReadIDX feeds arbitrary bytes to the IDX readers, written as they are
// (even mode: a plain file, or a possibly corrupt gzip stream when they
// start with the gzip magic) or gzip-compressed by the test (odd mode, so
// that the fuzzer explores the IDX layer behind valid compression). The
// readers must never panic, and whatever they
// accept must be exactly what an independent decoding of the file finds:
// the right magic, the declared dimensions, and as many data bytes as they
// multiply to, equal to the file's.
//
// The seed corpus is in testdata/fuzz/FuzzReadIDX; run with
//
//	go test -run '^$' -fuzz '^FuzzReadIDX$' -fuzztime 20s ./datasets
func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes(2051, []uint32{2, 2, 3}, images(2, 2, 3)), byte(0), false)
	f.Add(idxBytes(2049, []uint32{3}, []byte{1, 2, 3}), byte(1), true)
	f.Add(gz(idxBytes(2051, []uint32{1, 1, 1}, []byte{7})), byte(0), false)
	dir := f.TempDir()
	// Small limits keep every iteration fast; the checks are the same.
	defer func(old int64) { datasets.MaxIDXBytes = old }(datasets.MaxIDXBytes)
	datasets.MaxIDXBytes = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte, mode byte, labels bool) {
		file := data
		if mode%2 == 1 {
			file = gz(data)
		}
		p := filepath.Join(dir, "idx")
		if err := os.WriteFile(p, file, 0o600); err != nil {
			t.Fatal(err)
		}
		var got []byte
		var dims []int
		var err error
		if labels {
			got, err = datasets.ReadIDXLabels(p)
			dims = []int{len(got)}
		} else {
			var n, rows, cols int
			got, n, rows, cols, err = datasets.ReadIDXImages(p)
			dims = []int{n, rows, cols}
		}
		if err != nil {
			return // any error is fine; a panic would have failed the test
		}
		plain, ok := decodeFile(file)
		if !ok {
			t.Fatalf("accepted a file that does not decompress: % x", file)
		}
		magic, ndim := uint32(2051), 3
		if labels {
			magic, ndim = 2049, 1
		}
		if len(plain) < 4+4*ndim || binary.BigEndian.Uint32(plain) != magic {
			t.Fatalf("accepted a file without magic %d: % x", magic, plain[:min(len(plain), 16)])
		}
		want := 1
		for k := range ndim {
			d := int(binary.BigEndian.Uint32(plain[4+4*k:]))
			if !labels && dims[k] != d {
				t.Fatalf("dimension %d = %d, header says %d", k, dims[k], d)
			}
			want *= d
		}
		if want == 0 || len(got) != want || !bytes.Equal(got, plain[4+4*ndim:]) {
			t.Fatalf("returned %d bytes for dimensions %v; the file holds %d after a %d-byte header",
				len(got), dims, len(plain)-4-4*ndim, 4+4*ndim)
		}
	})
}

// decodeFile returns the decompressed content of file if it starts with the
// gzip magic, the file itself otherwise; ok is false for a corrupt stream.
func decodeFile(file []byte) (plain []byte, ok bool) {
	if len(file) < 2 || file[0] != 0x1f || file[1] != 0x8b {
		return file, true
	}
	r, err := gzip.NewReader(bytes.NewReader(file))
	if err != nil {
		return nil, false
	}
	plain, err = io.ReadAll(io.LimitReader(r, 1<<20))
	return plain, err == nil
}
