//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package dist

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// TestRankErrorsReturn checks that an error inside MPI comes back as a Go
// error with MPI's message instead of aborting the job (MPI_ERRORS_RETURN
// is set): an all-reduce of MPI_DATATYPE_NULL, which Open MPI's argument
// checks reject (as MPI_ERR_OP: no sum is defined on it).
func TestRankErrorsReturn(t *testing.T) {
	c := inJob(t)
	d, err := c.Dup() // a bad call must not disturb the world communicator
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := d.(*MPI)
	// libmpi was loaded with RTLD_GLOBAL, so its symbols are global.
	null, err := purego.Dlsym(purego.RTLD_DEFAULT, "ompi_mpi_datatype_null")
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1}
	if err := m.lock("test"); err != nil {
		t.Fatal(err)
	}
	rc := call(m.w.lib.allreduce, mpiInPlace, uintptr(unsafe.Pointer(&x[0])), 1, null, m.w.lib.ops[Sum], *m.h)
	m.unlock()
	if rc == mpiSuccess {
		t.Fatal("MPI_Allreduce with a null datatype succeeded")
	}
	msg := m.errorf("Allreduce", "MPI_Allreduce", rc).Error()
	if !strings.Contains(msg, "MPI_ERR_") || !strings.Contains(msg, "MPI_Allreduce") {
		t.Fatalf("error %q does not carry MPI's message", msg)
	}
}

// TestLoadLibraryErrors checks the messages without Open MPI: a missing
// library names the package to install, and a library that is not Open
// MPI (here the C library, which exports no ompi_mpi_comm_world) says so.
func TestLoadLibraryErrors(t *testing.T) {
	t.Setenv(libEnv, "/nonexistent/libmpi.so.40")
	_, err := loadLibrary()
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/libmpi.so.40") || !strings.Contains(err.Error(), "apt-get install openmpi-bin") {
		t.Errorf("missing library: %v", err)
	}
	t.Setenv(libEnv, libcName)
	_, err = loadLibrary()
	if err == nil || !strings.Contains(err.Error(), "is not Open MPI") || !strings.Contains(err.Error(), "MPICH") {
		t.Errorf("the C library as libmpi: %v", err)
	}
}

// libcName is a library every process of these platforms has loaded.
var libcName = map[string]string{"linux": "libc.so.6", "darwin": "/usr/lib/libSystem.B.dylib", "freebsd": "libc.so.7"}[runtime.GOOS]
