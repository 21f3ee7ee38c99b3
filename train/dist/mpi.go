//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package dist

// Open MPI loaded at run time with purego (dlopen without cgo), as package
// gemm loads OpenBLAS: a plain `go build` needs neither the library nor a
// C compiler, and a program that never asks for MPI never loads it.
//
// Open MPI's handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, …) are the
// addresses of exported data objects (ompi_mpi_comm_world, …): the address
// of the symbol is the handle C code passes. MPICH and the MPI 5 standard
// ABI use other handle values; see loadLibrary.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libEnv names a libmpi to load instead of the usual names.
const libEnv = "GELU_MPI_LIB"

// libNames are the library names tried, in order, when GELU_MPI_LIB is
// unset: Open MPI 3, 4 and 5 all ship libmpi.so.40.
var libNames = map[string][]string{
	"linux":   {"libmpi.so.40", "libmpi.so"},
	"freebsd": {"libmpi.so.40", "libmpi.so"},
	"darwin": {"libmpi.40.dylib", "/opt/homebrew/lib/libmpi.40.dylib",
		"/usr/local/lib/libmpi.40.dylib"},
}

// installHint says how to get Open MPI where the names above are missing.
const installHint = "install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin; it brings libopenmpi3 with libmpi.so.40), or set " + libEnv + " to a libmpi.so.40"

// C constants of Open MPI's mpi.h (4.x and 5.x).
const (
	mpiSuccess          = 0
	mpiThreadSerialized = 2
	mpiMaxErrorString   = 256 // OPAL_MAX_ERROR_STRING
	mpiMaxLibVersion    = 256 // MPI_MAX_LIBRARY_VERSION_STRING
	mpiInPlace          = 1   // MPI_IN_PLACE is (void *) 1
)

// library is a loaded libmpi: its functions and predefined handles.
type library struct {
	path    string
	version string // MPI_Get_library_version's first line

	initThread, finalize, abort, commRank, commSize, commDup, commFree,
	setErrhandler, errorString, libVersion,
	allreduce, iallreduce, allgather, iallgather, alltoall, ialltoall, bcast,
	test, wait uintptr

	world, errorsReturn uintptr
	types               [len(kinds)]uintptr
	ops                 [len(opNames)]uintptr
}

var (
	libOnce sync.Once
	libErr  error
	lib     *library
)

// Available reports whether MPI can be used in this process: nil when a
// usable libmpi is installed, otherwise an error saying what to install.
// It loads the library once (but does not initialize MPI) and gives the
// same answer to every caller, code and tests alike.
func Available() error {
	libOnce.Do(func() { lib, libErr = loadLibrary() })
	return libErr
}

func loadLibrary() (*library, error) {
	names := libNames[runtime.GOOS]
	if p := os.Getenv(libEnv); p != "" {
		names = []string{p}
	}
	var h uintptr
	var errs []string
	l := &library{}
	// dlerror's message belongs to the OS thread that called dlopen.
	runtime.LockOSThread()
	for _, name := range names {
		// RTLD_GLOBAL: Open MPI's plugins (mca_*.so), which it dlopens
		// itself, resolve symbols of libmpi and libopen-pal through the
		// global namespace.
		var err error
		if h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			l.path = name
			break
		}
		msg := err.Error()
		if !strings.Contains(msg, name) {
			msg = name + ": " + msg
		}
		errs = append(errs, msg)
	}
	runtime.UnlockOSThread()
	if h == 0 {
		return nil, fmt.Errorf("dist: MPI is not available: %s; %s", strings.Join(errs, "; "), installHint)
	}
	// MPICH (libmpi.so.12) and the MPI 5 standard ABI (libmpi_abi.so)
	// export the functions but not these objects: their handles are
	// integer constants of their own mpi.h.
	if _, err := purego.Dlsym(h, "ompi_mpi_comm_world"); err != nil {
		return nil, fmt.Errorf("dist: %s is not Open MPI (it has no ompi_mpi_comm_world); only Open MPI's handles are supported, not MPICH's or the MPI 5 standard ABI's: %s", l.path, installHint)
	}
	syms := []struct {
		p    *uintptr
		name string
	}{
		{&l.initThread, "MPI_Init_thread"}, {&l.finalize, "MPI_Finalize"}, {&l.abort, "MPI_Abort"},
		{&l.commRank, "MPI_Comm_rank"}, {&l.commSize, "MPI_Comm_size"},
		{&l.commDup, "MPI_Comm_dup"}, {&l.commFree, "MPI_Comm_free"},
		{&l.setErrhandler, "MPI_Comm_set_errhandler"}, {&l.errorString, "MPI_Error_string"},
		{&l.libVersion, "MPI_Get_library_version"},
		{&l.allreduce, "MPI_Allreduce"}, {&l.iallreduce, "MPI_Iallreduce"},
		{&l.allgather, "MPI_Allgather"}, {&l.iallgather, "MPI_Iallgather"},
		{&l.alltoall, "MPI_Alltoall"}, {&l.ialltoall, "MPI_Ialltoall"}, {&l.bcast, "MPI_Bcast"},
		{&l.test, "MPI_Test"}, {&l.wait, "MPI_Wait"},
		{&l.world, "ompi_mpi_comm_world"}, {&l.errorsReturn, "ompi_mpi_errors_return"},
	}
	for k := range kinds {
		syms = append(syms, struct {
			p    *uintptr
			name string
		}{&l.types[k], kinds[k].symbol})
	}
	for o := range opNames {
		syms = append(syms, struct {
			p    *uintptr
			name string
		}{&l.ops[o], "ompi_mpi_op_" + opNames[o]})
	}
	for _, s := range syms {
		var err error
		if *s.p, err = purego.Dlsym(h, s.name); err != nil {
			return nil, fmt.Errorf("dist: %s is not a usable Open MPI: no symbol %s", l.path, s.name)
		}
	}
	buf := make([]byte, mpiMaxLibVersion+1)
	n := new(int32)
	purego.SyscallN(l.libVersion, uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(n)))
	l.version = strings.TrimSpace(strings.SplitN(cString(buf[:max(0, min(int(*n), len(buf)))]), "\n", 2)[0])
	return l, nil
}

func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// call runs fn with args and returns its C int result.
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// world is the state shared by the world communicator and its Dups.
type world struct {
	lib *library
	// mu serializes calls into MPI: it is initialized with
	// MPI_THREAD_SERIALIZED, so any OS thread may call, one at a time.
	mu     sync.Mutex
	closed bool
	// finalize asks the OS thread that initialized MPI, which must also
	// finalize it, to do so.
	finalize chan chan int32
}

// MPI is a communicator of a process started by an MPI launcher (mpirun,
// srun with PMIx). Init returns the world communicator.
type MPI struct {
	w          *world
	h          *uintptr // the MPI_Comm handle, on the heap for C to write
	rank, size int
	isWorld    bool
}

var (
	initMu    sync.Mutex
	initWorld *MPI
	initDone  bool // MPI was initialized once: it cannot be again
)

// Init initializes MPI (MPI_Init_thread with MPI_THREAD_SERIALIZED) and
// returns the world communicator, with errors returned rather than fatal
// (MPI_ERRORS_RETURN). Rank and size come from the library and must agree
// with the launcher's environment (OMPI_COMM_WORLD_*, PMI_*, or Slurm's
// SLURM_PROCID and SLURM_STEP_NUM_TASKS), which catches a program started
// by srun without MPI support, where every process would be rank 0 of 1.
// Further calls return the same communicator; after its Close, MPI cannot
// be initialized again.
func Init() (*MPI, error) {
	initMu.Lock()
	defer initMu.Unlock()
	if initWorld != nil {
		return initWorld, nil
	}
	if initDone {
		return nil, errors.New("dist.Init: MPI was finalized (Close) and cannot be initialized again")
	}
	if err := Available(); err != nil {
		return nil, err
	}
	launch, launched, err := FromEnv()
	if err != nil {
		return nil, err
	}
	w := &world{lib: lib, finalize: make(chan chan int32)}
	started := make(chan int32)
	provided := new(int32)
	go func() {
		// MPI_Finalize must run on the thread that called MPI_Init_thread;
		// this goroutine keeps that thread until then.
		runtime.LockOSThread()
		started <- call(lib.initThread, 0, 0, mpiThreadSerialized, uintptr(unsafe.Pointer(provided)))
		reply := <-w.finalize
		reply <- call(lib.finalize)
	}()
	initDone = true
	if rc := <-started; rc != mpiSuccess {
		return nil, fmt.Errorf("dist.Init: MPI_Init_thread failed with error %d (%s)", rc, lib.path)
	}
	m := &MPI{w: w, h: &lib.world, isWorld: true}
	if *provided < mpiThreadSerialized {
		m.abandon()
		return nil, fmt.Errorf("dist.Init: %s provides thread level %d, want MPI_THREAD_SERIALIZED (%d) or more", lib.version, *provided, mpiThreadSerialized)
	}
	if err := m.setup("dist.Init"); err != nil {
		m.abandon()
		return nil, err
	}
	if launched && (launch.Rank != m.rank || launch.Size != m.size) {
		m.abandon()
		return nil, fmt.Errorf("dist.Init: %s says rank %d of %d, but MPI says rank %d of %d: the processes were not started as one MPI job (under srun use --mpi=pmix, or start with mpirun)",
			launch.Source, launch.Rank, launch.Size, m.rank, m.size)
	}
	initWorld = m
	return m, nil
}

// abandon finalizes MPI after a failed Init.
func (m *MPI) abandon() {
	reply := make(chan int32)
	m.w.finalize <- reply
	<-reply
	m.w.closed = true
}

// setup makes errors return instead of aborting and reads rank and size.
func (m *MPI) setup(who string) error {
	l := m.w.lib
	if rc := call(l.setErrhandler, *m.h, l.errorsReturn); rc != mpiSuccess {
		return m.errorf(who, "MPI_Comm_set_errhandler", rc)
	}
	r, s := new(int32), new(int32)
	if rc := call(l.commRank, *m.h, uintptr(unsafe.Pointer(r))); rc != mpiSuccess {
		return m.errorf(who, "MPI_Comm_rank", rc)
	}
	if rc := call(l.commSize, *m.h, uintptr(unsafe.Pointer(s))); rc != mpiSuccess {
		return m.errorf(who, "MPI_Comm_size", rc)
	}
	m.rank, m.size = int(*r), int(*s)
	return nil
}

// errorf is the error of an MPI call that returned rc.
func (m *MPI) errorf(who, fn string, rc int32) error {
	buf := make([]byte, mpiMaxErrorString+1)
	n := new(int32)
	msg := "unknown error"
	if call(m.w.lib.errorString, uintptr(rc), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(n))) == mpiSuccess {
		msg = cString(buf[:max(0, min(int(*n), len(buf)))])
	}
	return fmt.Errorf("dist: %s on rank %d: %s: %s (MPI error %d)", who, m.rank, fn, msg, rc)
}

// Rank returns this process's rank, 0 … Size−1.
func (m *MPI) Rank() int { return m.rank }

// Size returns the number of processes.
func (m *MPI) Size() int { return m.size }

// Library returns the MPI library's version line and file, e.g.
// "Open MPI v4.1.4, … (libmpi.so.40)".
func (m *MPI) Library() string { return m.w.lib.version + " (" + m.w.lib.path + ")" }

// lock takes the MPI lock, failing if MPI was finalized.
func (m *MPI) lock(who string) error {
	m.w.mu.Lock()
	if m.w.closed {
		m.w.mu.Unlock()
		return fmt.Errorf("dist: %s after Close", who)
	}
	return nil
}

func (m *MPI) unlock() { m.w.mu.Unlock() }

// count checks that a buffer's length fits MPI's C int counts.
func count(who string, b buffer) error {
	if b.n > 1<<31-1 {
		return fmt.Errorf("dist: %s of %d elements: MPI counts are C ints (at most %d); split the buffer", who, b.n, 1<<31-1)
	}
	return nil
}

func (m *MPI) op(who string, op Op) (uintptr, error) {
	if op < 0 || int(op) >= len(opNames) {
		return 0, fmt.Errorf("dist: %s with %v: want Sum, Max or Min", who, op)
	}
	return m.w.lib.ops[op], nil
}

// run calls a blocking MPI function f under the MPI lock. keep are the
// buffers f reads and writes, kept alive until it returns.
func (m *MPI) run(who, fn string, f func() int32, keep ...any) error {
	if err := m.lock(who); err != nil {
		return err
	}
	defer m.unlock()
	rc := f()
	runtime.KeepAlive(keep)
	if rc != mpiSuccess {
		return m.errorf(who, fn, rc)
	}
	return nil
}

// Allreduce implements Comm.
func (m *MPI) Allreduce(buf any, op Op) error {
	const who = "Allreduce"
	b, err := bufferOf(who, buf)
	if err == nil {
		err = count(who, b)
	}
	o, err2 := m.op(who, op)
	if err = errors.Join(err, err2); err != nil || b.n == 0 {
		return err
	}
	l := m.w.lib
	return m.run(who, "MPI_Allreduce", func() int32 {
		return call(l.allreduce, mpiInPlace, uintptr(b.ptr), uintptr(b.n), l.types[b.kind], o, *m.h)
	}, buf)
}

// Iallreduce implements Comm.
func (m *MPI) Iallreduce(buf any, op Op) (Request, error) {
	const who = "Iallreduce"
	b, err := bufferOf(who, buf)
	if err == nil {
		err = count(who, b)
	}
	o, err2 := m.op(who, op)
	if err = errors.Join(err, err2); err != nil {
		return nil, err
	}
	l := m.w.lib
	return m.start(who, "MPI_Iallreduce", []any{buf}, func(req uintptr) int32 {
		return call(l.iallreduce, mpiInPlace, uintptr(b.ptr), uintptr(b.n), l.types[b.kind], o, *m.h, req)
	})
}

// Allgather implements Comm.
func (m *MPI) Allgather(send, recv any) error {
	const who = "Allgather"
	s, r, err := gatherBuffers(who, send, recv, m.size, false)
	if err == nil {
		err = count(who, r)
	}
	if err != nil || s.n == 0 {
		return err
	}
	l := m.w.lib
	t := l.types[s.kind]
	return m.run(who, "MPI_Allgather", func() int32 {
		return call(l.allgather, uintptr(s.ptr), uintptr(s.n), t, uintptr(r.ptr), uintptr(s.n), t, *m.h)
	}, send, recv)
}

// Iallgather implements Comm.
func (m *MPI) Iallgather(send, recv any) (Request, error) {
	const who = "Iallgather"
	s, r, err := gatherBuffers(who, send, recv, m.size, false)
	if err == nil {
		err = count(who, r)
	}
	if err != nil {
		return nil, err
	}
	l := m.w.lib
	t := l.types[s.kind]
	return m.start(who, "MPI_Iallgather", []any{send, recv}, func(req uintptr) int32 {
		return call(l.iallgather, uintptr(s.ptr), uintptr(s.n), t, uintptr(r.ptr), uintptr(s.n), t, *m.h, req)
	})
}

// Alltoall implements Comm.
func (m *MPI) Alltoall(send, recv any) error {
	const who = "Alltoall"
	s, r, err := gatherBuffers(who, send, recv, m.size, true)
	if err == nil {
		err = count(who, r)
	}
	if err != nil || s.n == 0 {
		return err
	}
	l := m.w.lib
	t := l.types[s.kind]
	per := uintptr(s.n / m.size)
	return m.run(who, "MPI_Alltoall", func() int32 {
		return call(l.alltoall, uintptr(s.ptr), per, t, uintptr(r.ptr), per, t, *m.h)
	}, send, recv)
}

// Ialltoall implements Comm.
func (m *MPI) Ialltoall(send, recv any) (Request, error) {
	const who = "Ialltoall"
	s, r, err := gatherBuffers(who, send, recv, m.size, true)
	if err == nil {
		err = count(who, r)
	}
	if err != nil {
		return nil, err
	}
	l := m.w.lib
	t := l.types[s.kind]
	per := uintptr(s.n / m.size)
	return m.start(who, "MPI_Ialltoall", []any{send, recv}, func(req uintptr) int32 {
		return call(l.ialltoall, uintptr(s.ptr), per, t, uintptr(r.ptr), per, t, *m.h, req)
	})
}

// Bcast implements Comm.
func (m *MPI) Bcast(buf any, root int) error {
	const who = "Bcast"
	b, err := bufferOf(who, buf)
	if err == nil {
		err = count(who, b)
	}
	if err == nil && (root < 0 || root >= m.size) {
		err = fmt.Errorf("dist: Bcast from root %d: want 0 ≤ root < %d", root, m.size)
	}
	if err != nil || b.n == 0 {
		return err
	}
	l := m.w.lib
	return m.run(who, "MPI_Bcast", func() int32 {
		return call(l.bcast, uintptr(b.ptr), uintptr(b.n), l.types[b.kind], uintptr(root), *m.h)
	}, buf)
}

// Dup implements Comm (MPI_Comm_dup, which keeps the error handler).
func (m *MPI) Dup() (Comm, error) {
	if err := m.lock("Dup"); err != nil {
		return nil, err
	}
	defer m.unlock()
	d := &MPI{w: m.w, h: new(uintptr), rank: m.rank, size: m.size}
	if rc := call(m.w.lib.commDup, *m.h, uintptr(unsafe.Pointer(d.h))); rc != mpiSuccess {
		return nil, m.errorf("Dup", "MPI_Comm_dup", rc)
	}
	return d, nil
}

// Abort implements Comm (MPI_Abort). It does not wait for the MPI lock: a
// rank stuck in a collective with a dead peer holds it.
func (m *MPI) Abort(code int) error {
	rc := call(m.w.lib.abort, *m.h, uintptr(int32(code)))
	return m.errorf("Abort", "MPI_Abort", rc)
}

// Close implements Comm: MPI_Comm_free for a Dup, MPI_Finalize for the
// world communicator (every rank must call it, with no operation in flight).
func (m *MPI) Close() error {
	if !m.isWorld {
		if err := m.lock("Close"); err != nil {
			return err
		}
		defer m.unlock()
		if *m.h == 0 {
			return nil
		}
		if rc := call(m.w.lib.commFree, uintptr(unsafe.Pointer(m.h))); rc != mpiSuccess {
			return m.errorf("Close", "MPI_Comm_free", rc)
		}
		*m.h = 0
		return nil
	}
	if err := m.lock("Close"); err != nil {
		return err
	}
	defer m.unlock()
	reply := make(chan int32)
	m.w.finalize <- reply
	rc := <-reply
	m.w.closed = true
	initMu.Lock()
	initWorld = nil
	initMu.Unlock()
	if rc != mpiSuccess {
		return fmt.Errorf("dist: Close on rank %d: MPI_Finalize failed with error %d", m.rank, rc)
	}
	return nil
}

// request is a nonblocking MPI operation. It holds the buffers so that the
// collector keeps them (Go's heap does not move objects) until MPI is done
// with them.
type request struct {
	m      *MPI
	who    string
	h      uintptr // MPI_Request; MPI sets it to MPI_REQUEST_NULL when done
	keep   []any
	done   bool
	failed error
}

// start runs fn, which starts a nonblocking operation writing its handle
// to the address it is given.
func (m *MPI) start(who, fn string, keep []any, f func(req uintptr) int32) (Request, error) {
	if err := m.lock(who); err != nil {
		return nil, err
	}
	defer m.unlock()
	r := &request{m: m, who: who, keep: keep}
	if rc := f(uintptr(unsafe.Pointer(&r.h))); rc != mpiSuccess {
		return nil, m.errorf(who, fn, rc)
	}
	return r, nil
}

// Test implements Request (MPI_Test).
func (r *request) Test() (bool, error) {
	if r.done || r.failed != nil {
		return r.done, r.failed
	}
	if err := r.m.lock(r.who); err != nil {
		return false, err
	}
	defer r.m.unlock()
	flag := new(int32)
	if rc := call(r.m.w.lib.test, uintptr(unsafe.Pointer(&r.h)), uintptr(unsafe.Pointer(flag)), 0); rc != mpiSuccess {
		r.failed = r.m.errorf(r.who, "MPI_Test", rc)
		return false, r.failed
	}
	if *flag != 0 {
		r.done, r.keep = true, nil
	}
	return r.done, nil
}

// Wait implements Request. With a context that can end it polls MPI_Test,
// yielding between polls; otherwise it blocks in MPI_Wait.
func (r *request) Wait(ctx context.Context) error {
	if r.done || r.failed != nil {
		return r.failed
	}
	if ctx.Done() == nil {
		if err := r.m.lock(r.who); err != nil {
			return err
		}
		defer r.m.unlock()
		if rc := call(r.m.w.lib.wait, uintptr(unsafe.Pointer(&r.h)), 0); rc != mpiSuccess {
			r.failed = r.m.errorf(r.who, "MPI_Wait", rc)
			return r.failed
		}
		r.done, r.keep = true, nil
		return nil
	}
	start := time.Now()
	for {
		ok, err := r.Test()
		if ok || err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("dist: %s on rank %d not complete after %v: %w", r.who, r.m.rank, time.Since(start).Round(time.Millisecond), err)
		}
		// Spin briefly (a shared-memory collective completes in
		// microseconds), then sleep in short steps: MPI advances the
		// operation only while some rank's thread is inside a call.
		if time.Since(start) < time.Millisecond {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}
