//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package dist

import (
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
