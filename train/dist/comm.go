package dist

// The communicator: what the rest of the package (and the trainer) needs
// from MPI, so that one process without MPI runs the same code (Single).

import (
	"context"
	"fmt"
	"os"
	"unsafe"
)

// Op is a reduction operation of Allreduce.
type Op int

// The reductions: element-wise sum, maximum and minimum over the ranks.
const (
	Sum Op = iota
	Max
	Min
)

var opNames = [...]string{Sum: "sum", Max: "max", Min: "min"}

func (o Op) String() string {
	if o < 0 || int(o) >= len(opNames) {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// Comm is a group of processes (ranks 0 … Size−1) that run the same
// program and call the same collective operations in the same order.
// Buffers are slices of float32, float64, int64 or byte; a collective's
// buffers must have the same length on every rank.
//
// A Comm is safe for use by several goroutines, but collectives are
// matched by the order in which each rank starts them: two goroutines
// starting collectives on one Comm must do so in the same order on every
// rank (give each its own Comm with Dup).
type Comm interface {
	Rank() int
	Size() int
	// Allreduce replaces buf on every rank by op over the ranks' bufs.
	Allreduce(buf any, op Op) error
	// Iallreduce starts Allreduce; buf must not be touched until the
	// Request completes.
	Iallreduce(buf any, op Op) (Request, error)
	// Allgather writes rank r's send into recv[r·len(send):(r+1)·len(send)]
	// on every rank; len(recv) = Size·len(send).
	Allgather(send, recv any) error
	// Iallgather starts Allgather.
	Iallgather(send, recv any) (Request, error)
	// Alltoall sends block j of send (len(send)/Size elements) to rank j,
	// which receives it as block r of recv (r the sender).
	Alltoall(send, recv any) error
	// Ialltoall starts Alltoall.
	Ialltoall(send, recv any) (Request, error)
	// Bcast copies root's buf into every rank's buf.
	Bcast(buf any, root int) error
	// Dup returns a new communicator over the same ranks whose
	// collectives are matched independently of this one's.
	Dup() (Comm, error)
	// Abort ends every rank of the job with the exit status code, as
	// promptly as the launcher allows. It returns only if that failed.
	Abort(code int) error
	// Close releases the communicator (for the world communicator: shuts
	// MPI down; call it once every rank is done).
	Close() error
}

// Request is a collective operation in flight.
type Request interface {
	// Test reports whether the operation has completed, advancing it.
	Test() (bool, error)
	// Wait blocks until the operation completes or ctx ends. After an
	// error the communicator is in an unknown state: Abort.
	Wait(ctx context.Context) error
}

// buffer is a collective's buffer as the library sees it.
type buffer struct {
	ptr  unsafe.Pointer
	n    int // elements
	kind kind
}

// kind is an element type a buffer may hold.
type kind int

const (
	kFloat32 kind = iota
	kFloat64
	kInt64
	kByte
)

// kinds are the element types: Go name, size, and Open MPI's handle symbol.
var kinds = [...]struct {
	name   string
	size   int
	symbol string
}{
	kFloat32: {"float32", 4, "ompi_mpi_float"},
	kFloat64: {"float64", 8, "ompi_mpi_double"},
	kInt64:   {"int64", 8, "ompi_mpi_int64_t"},
	kByte:    {"byte", 1, "ompi_mpi_byte"},
}

func (k kind) String() string { return kinds[k].name }

// bufferOf views a slice as a buffer, or says which types are accepted.
func bufferOf(who string, x any) (buffer, error) {
	switch s := x.(type) {
	case []float32:
		return buffer{unsafe.Pointer(unsafe.SliceData(s)), len(s), kFloat32}, nil
	case []float64:
		return buffer{unsafe.Pointer(unsafe.SliceData(s)), len(s), kFloat64}, nil
	case []int64:
		return buffer{unsafe.Pointer(unsafe.SliceData(s)), len(s), kInt64}, nil
	case []byte:
		return buffer{unsafe.Pointer(unsafe.SliceData(s)), len(s), kByte}, nil
	}
	return buffer{}, fmt.Errorf("dist: %s of a %T: want []float32, []float64, []int64 or []byte", who, x)
}

// bytes is the buffer's memory.
func (b buffer) bytes() []byte {
	return unsafe.Slice((*byte)(b.ptr), b.n*kinds[b.kind].size)
}

// gatherBuffers checks an Allgather's or Alltoall's pair of buffers:
// the same element type, len(recv) = size·len(send) for Allgather, equal
// lengths divisible by size for Alltoall.
func gatherBuffers(who string, send, recv any, size int, alltoall bool) (s, r buffer, err error) {
	if s, err = bufferOf(who, send); err != nil {
		return
	}
	if r, err = bufferOf(who, recv); err != nil {
		return
	}
	switch {
	case s.kind != r.kind:
		err = fmt.Errorf("dist: %s: send holds %s, recv %s; want the same type", who, s.kind, r.kind)
	case alltoall && (r.n != s.n || s.n%size != 0):
		err = fmt.Errorf("dist: %s over %d ranks: send has %d elements, recv %d; want equal lengths divisible by %d", who, size, s.n, r.n, size)
	case !alltoall && r.n != size*s.n:
		err = fmt.Errorf("dist: %s over %d ranks: send has %d elements, recv %d; want %d", who, size, s.n, r.n, size*s.n)
	}
	return
}

// Single returns the communicator of a process that trains alone: rank 0
// of 1, every collective a local copy. Code written against Comm runs
// unchanged without MPI.
func Single() Comm { return single{} }

type single struct{}

func (single) Rank() int { return 0 }
func (single) Size() int { return 1 }

func (single) Allreduce(buf any, op Op) error {
	_, err := bufferOf("Allreduce", buf)
	return err
}

func (s single) Iallreduce(buf any, op Op) (Request, error) {
	return done{}, s.Allreduce(buf, op)
}

func (single) Allgather(send, recv any) error {
	s, r, err := gatherBuffers("Allgather", send, recv, 1, false)
	if err == nil {
		copy(r.bytes(), s.bytes())
	}
	return err
}

func (s single) Iallgather(send, recv any) (Request, error) {
	return done{}, s.Allgather(send, recv)
}

func (single) Alltoall(send, recv any) error {
	s, r, err := gatherBuffers("Alltoall", send, recv, 1, true)
	if err == nil {
		copy(r.bytes(), s.bytes())
	}
	return err
}

func (s single) Ialltoall(send, recv any) (Request, error) {
	return done{}, s.Alltoall(send, recv)
}

func (single) Bcast(buf any, root int) error {
	if root != 0 {
		return fmt.Errorf("dist: Bcast from root %d in a communicator of 1 rank", root)
	}
	_, err := bufferOf("Bcast", buf)
	return err
}

func (single) Dup() (Comm, error) { return single{}, nil }

func (single) Abort(code int) error {
	os.Exit(code)
	return nil
}

func (single) Close() error { return nil }

// done is a Request that has completed.
type done struct{}

func (done) Test() (bool, error)            { return true, nil }
func (done) Wait(ctx context.Context) error { return nil }
