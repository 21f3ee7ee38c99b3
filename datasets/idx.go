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
	"math"
	"math/bits"
)

// IDX magic numbers: 0x08 (unsigned byte) in the third byte, the number of
// dimensions in the fourth.
const (
	idxImagesMagic = 0x00000803 // 2051: N×rows×cols
	idxLabelsMagic = 0x00000801 // 2049: N
)

// maxDeflateRatio is the largest expansion of deflate (zlib's FAQ: 1032:1,
// a 258-byte match per two bits). A gzip file of n bytes cannot hold more
// than maxDeflateRatio·n bytes of data, so a header claiming more is refused
// before anything is read or allocated.
const maxDeflateRatio = 1032

// ReadIDXImages reads an IDX image file (magic 2051), gzip-compressed or
// not, and returns its n images of rows×cols pixels, row-major, one byte
// each. It fails, naming the file, if the path is not a regular file, the
// file is empty, truncated, has another magic number, declares no images,
// declares more than MaxIDXBytes bytes of data or more than the file can
// hold, or has data beyond what its header declares (including further gzip
// members). The data buffer is allocated only after these checks.
func ReadIDXImages(path string) (pix []byte, n, rows, cols int, err error) {
	dims, pix, err := readIDX(path, idxImagesMagic, func(dims []uint64) (string, error) {
		if dims[1] == 0 || dims[2] == 0 {
			return "", fmt.Errorf("header declares images of %d×%d pixels", dims[1], dims[2])
		}
		return fmt.Sprintf("%d images of %d×%d", dims[0], dims[1], dims[2]), nil
	})
	if err != nil {
		return nil, 0, 0, 0, err
	}
	return pix, dims[0], dims[1], dims[2], nil
}

// ReadIDXLabels reads an IDX label file (magic 2049), gzip-compressed or
// not, with the same checks as ReadIDXImages.
func ReadIDXLabels(path string) ([]byte, error) {
	_, labels, err := readIDX(path, idxLabelsMagic, func(dims []uint64) (string, error) {
		return fmt.Sprintf("%d labels", dims[0]), nil
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
// the product of the dimensions in data bytes. describe checks the
// dimensions after the first and describes the content for messages.
func readIDX(path string, magic uint32, describe func(dims []uint64) (string, error)) (dims []int, data []byte, err error) {
	f, fileSize, err := openRegular(path)
	if err != nil {
		return nil, nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	kind, what := "label", "labels"
	if magic == idxImagesMagic {
		kind, what = "image", "images"
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
	isGz := len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b
	if isGz {
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
	udims := make([]uint64, ndim)
	for k := range udims {
		udims[k] = uint64(binary.BigEndian.Uint32(hdr[4+4*k:]))
	}
	if udims[0] == 0 {
		return nil, nil, fail("header declares 0 %s", what)
	}
	desc, err := describe(udims)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	// The product of up to three 32-bit dimensions may not fit 64 bits:
	// multiply with overflow detection, then compare with the limit, which
	// also keeps every dimension within an int on 32-bit platforms.
	usize, overflow := uint64(1), false
	for _, d := range udims {
		hi, lo := bits.Mul64(usize, d)
		usize, overflow = lo, overflow || hi != 0
	}
	if overflow || usize > uint64(MaxIDXBytes) || usize > math.MaxInt {
		return nil, nil, fail("header declares %s, more than datasets.MaxIDXBytes = %d bytes", desc, MaxIDXBytes)
	}
	size := int(usize)
	dims = make([]int, ndim)
	for k, d := range udims {
		dims[k] = int(d)
	}

	if !isGz {
		// The file size says how much data there is: check before allocating.
		switch have := fileSize - int64(len(hdr)); {
		case have < int64(size):
			return nil, nil, failData("truncated: %d bytes of data, want %d for %s", have, size, desc)
		case have > int64(size):
			return nil, nil, failData("data continues after the %d bytes of %s the header declares", size, desc)
		}
		data = make([]byte, size)
		if n, err := io.ReadFull(r, data); err != nil {
			return nil, nil, failData("reading the data: %d of %d bytes for %s: %v", n, size, desc, err)
		}
		if _, err := br.Peek(1); err != io.EOF { // the file grew since it was opened
			return nil, nil, failData("data continues after the %d bytes of %s the header declares", size, desc)
		}
		return dims, data, nil
	}

	if bound := maxDeflateRatio * fileSize; int64(len(hdr)+size) > bound {
		return nil, nil, failData("header declares %s (%d bytes), but a gzip file of %d bytes decompresses to at most %d",
			desc, size, fileSize, bound)
	}
	// Grow with the data actually present rather than trusting the header
	// for the allocation; the limit stops decompression at the first byte
	// beyond the declared size, so a gzip bomb appended to a valid file
	// costs one byte, not its size.
	var buf bytes.Buffer
	buf.Grow(int(min(int64(size), 16*fileSize)) + bytes.MinRead + 1) // ReadFrom keeps MinRead bytes free
	if _, err := buf.ReadFrom(io.LimitReader(r, int64(size)+1)); err != nil {
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) && buf.Len() < size:
			return nil, nil, failData("truncated: the compressed stream ends after %d bytes of data, want %d for %s", buf.Len(), size, desc)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, nil, failData("truncated: the compressed stream ends before its checksum (all %d bytes of data for %s are present)", size, desc)
		default:
			return nil, nil, failData("corrupt gzip stream: %v", err)
		}
	}
	// ReadFrom stopped at io.EOF, which gzip returns only after checking
	// the checksum of the last member.
	switch got := buf.Len(); {
	case got < size:
		return nil, nil, failData("truncated: %d bytes of data, want %d for %s", got, size, desc)
	case got > size:
		return nil, nil, failData("data continues after the %d bytes of %s the header declares", size, desc)
	}
	return dims, buf.Bytes(), nil
}
