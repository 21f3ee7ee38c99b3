package train_test

import (
	"testing"

	"github.com/geluproject/gelu/train/internal/mpitest"
)

// TestMain joins MPI in the ranks of the data-parallel tests' jobs
// (parallel_test.go); elsewhere it runs the tests as usual.
func TestMain(m *testing.M) { mpitest.Main(m) }
