package dist

// Benchmarks of the collectives and the Reducer. Those that communicate
// run only as the ranks of a job, with a fixed iteration count so that
// every rank runs the same number of collectives:
//
//	go test -c -o dist.test ./train/dist
//	GELU_DIST_WORKER=1 mpirun --allow-run-as-root -np 2 -x GELU_DIST_WORKER \
//	    ./dist.test -test.run '^$' -test.bench 'Allreduce|Copy' -test.benchtime 50x
//
// (.ci/mpi-test.sh bench runs them.) Bandwidths are reported as MB/s of
// the buffer's size (the algorithm bandwidth); busbw-MB/s scales it by
// 2(N−1)/N, the bytes each rank must send and receive in a ring
// all-reduce, as nccl-tests do.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

var benchBytes = []int{8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 128 << 20}

func sizeName(b int) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%dMiB", b>>20)
	case b >= 1<<10:
		return fmt.Sprintf("%dKiB", b>>10)
	}
	return fmt.Sprintf("%dB", b)
}

// BenchmarkCopy copies the bytes of each size once: the memory-bandwidth
// yardstick for a shared-memory all-reduce, which must at least read every
// rank's buffer and write the result.
func BenchmarkCopy(b *testing.B) {
	for _, n := range benchBytes {
		b.Run(sizeName(n), func(b *testing.B) {
			src, dst := make([]float32, n/4+n%4), make([]float32, n/4+n%4)
			for i := range src {
				src[i] = float32(i)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

// timed runs op b.N times and reports, besides the mean, the fastest and
// the median iteration: on a machine shared with other work the mean of a
// collective includes the times a rank waited for a core, the minimum
// does not.
func timed(b *testing.B, op func() error) {
	var ts []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		ts = append(ts, time.Since(t0))
	}
	slices.Sort(ts)
	b.ReportMetric(float64(ts[0].Nanoseconds()), "min-ns/op")
	b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds()), "p50-ns/op")
}

func inJobBench(b *testing.B) Comm {
	if testWorld == nil {
		b.Skipf("runs as a rank of an mpirun job with a fixed -test.benchtime (see bench_test.go; .ci/mpi-test.sh bench)")
	}
	return testWorld
}

// BenchmarkAllreduce sums a float32 buffer over the ranks in place with
// the library's own choice of algorithm: MPI_Allreduce, and MPI_Iallreduce
// followed by MPI_Wait (the Reducer's path with Options.Overlap, which
// lets a bucket's reduction start during the backward pass).
func BenchmarkAllreduce(b *testing.B) {
	c := inJobBench(b)
	busbw := 2 * float64(c.Size()-1) / float64(c.Size())
	for _, nonblocking := range []bool{false, true} {
		for _, n := range benchBytes {
			name := "blocking/" + sizeName(n)
			if nonblocking {
				name = "nonblocking/" + sizeName(n)
			}
			b.Run(name, func(b *testing.B) {
				buf := make([]float32, max(1, n/4))
				b.SetBytes(int64(4 * len(buf)))
				timed(b, func() error {
					if !nonblocking {
						return c.Allreduce(buf, Sum)
					}
					req, err := c.Iallreduce(buf, Sum)
					if err != nil {
						return err
					}
					return req.Wait(context.Background())
				})
				b.ReportMetric(float64(b.N)*float64(4*len(buf))*busbw/b.Elapsed().Seconds()/1e6, "busbw-MB/s")
			})
		}
	}
}

// BenchmarkIallreduceWait is a small all-reduce's latency through the
// nonblocking path when the Wait polls MPI_Test (a context that can end,
// as with Options.Timeout) instead of blocking in MPI_Wait.
func BenchmarkIallreduceWait(b *testing.B) {
	c := inJobBench(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	buf := []float64{1}
	timed(b, func() error {
		req, err := c.Iallreduce(buf, Sum)
		if err != nil {
			return err
		}
		return req.Wait(ctx)
	})
}

// BenchmarkReducer is one step's gradient averaging for a model of float32
// parameters of 1 MiB each: copying into the buckets, the collectives, and
// copying back, in the default and the deterministic mode.
func BenchmarkReducer(b *testing.B) {
	c := inJobBench(b)
	for _, total := range []int{1 << 20, 16 << 20, 128 << 20} {
		for _, det := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/deterministic=%v", sizeName(total), det), func(b *testing.B) {
				var params []graph.NamedTensor
				var grads []*tensor.Dense
				for i := range total / (1 << 20) {
					v := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(1<<18))
					params = append(params, graph.NamedTensor{Name: fmt.Sprint("p", i), Value: v})
					grads = append(grads, v.Clone().(*tensor.Dense))
				}
				red, err := NewReducer(c, params, Options{Deterministic: det})
				if err != nil {
					b.Fatal(err)
				}
				defer red.Close()
				b.SetBytes(int64(total))
				timed(b, func() error { return red.Wait(context.Background(), grads) })
			})
		}
	}
}

// BenchmarkCheckParams is the local part of the divergence check, a
// CRC-32C of every parameter (on one process the gather is a copy): the
// cost of checking every K steps is this per step divided by K.
func BenchmarkCheckParams(b *testing.B) {
	const total = 64 << 20
	var params []graph.NamedTensor
	for i := range total / (4 << 20) {
		params = append(params, graph.NamedTensor{Name: fmt.Sprint("p", i), Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(1<<20))})
	}
	b.SetBytes(total)
	for b.Loop() {
		if err := CheckParams(Single(), params); err != nil {
			b.Fatal(err)
		}
	}
}
