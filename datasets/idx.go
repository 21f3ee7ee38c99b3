package datasets

// Reader for the IDX format of MNIST and its drop-in replacements
// (Fashion-MNIST, KMNIST, EMNIST): a big-endian header (magic number, then
// one uint32 per dimension) followed by unsigned bytes. Files may be
// gzip-compressed; compression is recognized by its magic bytes, not the
// file name.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX magic numbers: 0x08 (unsigned byte) in the third byte, the number of
// dimensions in the fourth.
const (
	idxImagesMagic = 0x00000803 // 2051: N×rows×cols
	idxLabelsMagic = 0x00000801 // 2049: N
)

// maxIDXBytes bounds the data a header may declare, so that a corrupt
// header yields an error rather than an impossible allocation.
const maxIDXBytes = 1 << 40

// ReadIDXImages reads an IDX image file (magic 2051), gzip-compressed or
// not, and returns its n images of rows×cols pixels, row-major, one byte
// each. It fails, naming the file, if the file is empty, truncated, has
// another magic number, declares no images or has data beyond what its
// header declares.
func ReadIDXImages(path string) (pix []byte, n, rows, cols int, err error) {
	dims, pix, err := readIDX(path, idxImagesMagic, "images", func(dims []int) (int, string, error) {
		if dims[1] == 0 || dims[2] == 0 {
			return 0, "", fmt.Errorf("header declares images of %d×%d pixels", dims[1], dims[2])
		}
		return dims[1] * dims[2], fmt.Sprintf("%d images of %d×%d", dims[0], dims[1], dims[2]), nil
	})
	if err != nil {
		return nil, 0, 0, 0, err
	}
	return pix, dims[0], dims[1], dims[2], nil
}

// ReadIDXLabels reads an IDX label file (magic 2049), gzip-compressed or
// not, with the same checks as ReadIDXImages.
func ReadIDXLabels(path string) ([]byte, error) {
	_, labels, err := readIDX(path, idxLabelsMagic, "labels", func(dims []int) (int, string, error) {
		return 1, fmt.Sprintf("%d labels", dims[0]), nil
	})
	return labels, err
}

// LoadIDX reads a pair of IDX image and label files into a Dataset with
// pixels scaled to [0, 1] (byte/255) and Features = rows·cols. It checks
// that the files hold as many labels as images and that every label is
// below classes.
func LoadIDX(imagesPath, labelsPath string, classes int) (*Dataset, error) {
	if classes < 1 {
		return nil, fmt.Errorf("datasets.LoadIDX: classes = %d, want ≥ 1", classes)
	}
	return loadIDX(imagesPath, labelsPath, classes, 0, 0)
}

// loadIDX is LoadIDX that also requires images of wantRows×wantCols unless
// those are 0.
func loadIDX(imagesPath, labelsPath string, classes, wantRows, wantCols int) (*Dataset, error) {
	pix, n, rows, cols, err := ReadIDXImages(imagesPath)
	if err != nil {
		return nil, err
	}
	if wantRows > 0 && (rows != wantRows || cols != wantCols) {
		return nil, fmt.Errorf("datasets: %s: images are %d×%d, want %d×%d", imagesPath, rows, cols, wantRows, wantCols)
	}
	raw, err := ReadIDXLabels(labelsPath)
	if err != nil {
		return nil, err
	}
	if len(raw) != n {
		return nil, fmt.Errorf("datasets: %s has %d images but %s has %d labels, want the same number",
			imagesPath, n, labelsPath, len(raw))
	}
	labels := make([]int, n)
	for i, y := range raw {
		if int(y) >= classes {
			return nil, fmt.Errorf("datasets: %s: label %d at index %d, want 0 ≤ label < %d", labelsPath, y, i, classes)
		}
		labels[i] = int(y)
	}
	x := make([]float32, len(pix))
	for i, p := range pix {
		x[i] = float32(p) / 255
	}
	return &Dataset{Name: imagesPath, X: x, Features: rows * cols, Labels: labels, Classes: classes}, nil
}

// readIDX checks the magic number, reads the dimensions and then exactly
// dims[0]·itemSize(dims) data bytes.
func readIDX(path string, magic uint32, what string, itemSize func(dims []int) (int, string, error)) (dims []int, data []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	kind := "label"
	if magic == idxImagesMagic {
		kind = "image"
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("datasets: %s: %s (want an IDX %s file, magic number %d)", path, fmt.Sprintf(format, args...), kind, magic)
	}
	failData := func(format string, args ...any) error {
		return fmt.Errorf("datasets: %s: %s", path, fmt.Sprintf(format, args...))
	}
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	head, err := br.Peek(2)
	if len(head) == 0 {
		if err == io.EOF {
			return nil, nil, fail("file is empty")
		}
		return nil, nil, fmt.Errorf("datasets: reading %s: %w", path, err)
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fail("bad gzip header: %v", err)
		}
		defer gz.Close()
		r = gz
	}

	ndim := int(magic & 0xff)
	hdr := make([]byte, 4+4*ndim)
	// The magic number first, so that a wrong file is named as such even
	// when it is shorter than the expected header.
	got, err := io.ReadFull(r, hdr[:4])
	if err == nil {
		if m := binary.BigEndian.Uint32(hdr); m != magic {
			hint := ""
			switch m {
			case idxImagesMagic:
				hint = "; this is an IDX image file"
			case idxLabelsMagic:
				hint = "; this is an IDX label file"
			}
			return nil, nil, fail("magic number %d (0x%08x)%s", m, m, hint)
		}
		var more int
		more, err = io.ReadFull(r, hdr[4:])
		got += more
	}
	switch {
	case err == nil:
	case got == 0 && errors.Is(err, io.EOF):
		return nil, nil, fail("no data (empty after decompression)")
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, nil, fail("truncated header: %d bytes, want %d", got, len(hdr))
	default:
		return nil, nil, fail("reading the header: %v", err)
	}
	dims = make([]int, ndim)
	for k := range dims {
		dims[k] = int(binary.BigEndian.Uint32(hdr[4+4*k:]))
	}
	if dims[0] == 0 {
		return nil, nil, fail("header declares 0 %s", what)
	}
	item, desc, err := itemSize(dims)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	if dims[0] > maxIDXBytes/item {
		return nil, nil, fail("header declares %s, more than the %d bytes this reader accepts", desc, maxIDXBytes)
	}
	size := dims[0] * item

	// Grow with the data actually present rather than trusting the header
	// for the allocation; the limit catches data beyond the declared size.
	var buf bytes.Buffer
	buf.Grow(min(size, 64<<20) + bytes.MinRead + 1) // ReadFrom keeps MinRead bytes free
	if _, err := buf.ReadFrom(io.LimitReader(r, int64(size)+1)); err != nil {
		_, isGz := r.(*gzip.Reader)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) && buf.Len() < size:
			return nil, nil, failData("truncated: the compressed stream ends after %d bytes of data, want %d for %s", buf.Len(), size, desc)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, nil, failData("truncated: the compressed stream ends before its checksum (all %d bytes of data for %s are present)", size, desc)
		case isGz:
			return nil, nil, failData("corrupt gzip stream: %v", err)
		default:
			return nil, nil, failData("reading the data: %v", err)
		}
	}
	switch got := buf.Len(); {
	case got < size:
		return nil, nil, failData("truncated: %d bytes of data, want %d for %s", got, size, desc)
	case got > size:
		return nil, nil, failData("data continues after the %d bytes of %s the header declares", size, desc)
	}
	// Reading to the end makes gzip verify its checksum.
	if gz, ok := r.(*gzip.Reader); ok {
		if _, err := io.Copy(io.Discard, gz); err != nil {
			return nil, nil, failData("corrupt gzip stream: %v", err)
		}
	}
	return dims, buf.Bytes(), nil
}
