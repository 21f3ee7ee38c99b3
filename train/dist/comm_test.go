package dist

import (
	"context"
	"strings"
	"testing"
)

// collectiveSizes include the empty buffer and one large enough for the
// library's segmented (pipelined) algorithms.
var collectiveSizes = []int{0, 1, 7, 1000, 1<<20 + 3}

// TestRankCollectives checks every collective against its closed form:
// rank r contributes values that are exact in floating point, so the
// expected sums are exact too.
func TestRankCollectives(t *testing.T) {
	c := inJob(t)
	r, n := c.Rank(), c.Size()
	for _, size := range collectiveSizes {
		// Sum over r of (r + j/4) = n(n−1)/2 + n·j/4, exact for these sizes.
		x32 := make([]float32, size)
		x64 := make([]float64, size)
		xi := make([]int64, size)
		for j := range size {
			x32[j] = float32(r) + float32(j%1024)/4
			x64[j] = float64(r) + float64(j)/4
			xi[j] = int64(r)*1_000_000 + int64(j)
		}
		if err := c.Allreduce(x32, Sum); err != nil {
			t.Fatal(err)
		}
		if err := c.Allreduce(x64, Sum); err != nil {
			t.Fatal(err)
		}
		req, err := c.Iallreduce(xi, Sum)
		if err != nil {
			t.Fatal(err)
		}
		for {
			ok, err := req.Test()
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
		}
		tri := n * (n - 1) / 2
		for j := range size {
			if want := float32(tri) + float32(n)*float32(j%1024)/4; x32[j] != want {
				t.Fatalf("Allreduce float32 of %d: element %d is %v, want %v", size, j, x32[j], want)
			}
			if want := float64(tri) + float64(n)*float64(j)/4; x64[j] != want {
				t.Fatalf("Allreduce float64 of %d: element %d is %v, want %v", size, j, x64[j], want)
			}
			if want := int64(tri)*1_000_000 + int64(n)*int64(j); xi[j] != want {
				t.Fatalf("Iallreduce int64 of %d: element %d is %v, want %v", size, j, xi[j], want)
			}
		}
	}

	// Max and Min of (r+1)·j − r over ranks: (n)·j − (n−1) for j ≥ 1 (the
	// last rank), and j for the minimum (rank 0).
	mx, mn := make([]float64, 9), make([]float64, 9)
	for j := range mx {
		mx[j] = float64((r+1)*j - r)
		mn[j] = mx[j]
	}
	if err := c.Allreduce(mx, Max); err != nil {
		t.Fatal(err)
	}
	req, err := c.Iallreduce(mn, Min)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for j := range mx {
		wantMax, wantMin := float64(n*j-(n-1)), float64(j)
		if j == 0 {
			wantMax, wantMin = 0, float64(-(n - 1))
		}
		if mx[j] != wantMax || mn[j] != wantMin {
			t.Fatalf("element %d: max %v, min %v; want %v and %v", j, mx[j], mn[j], wantMax, wantMin)
		}
	}

	for _, size := range collectiveSizes[:4] {
		// Allgather: block q of recv is rank q's send.
		send := make([]float64, size)
		for j := range send {
			send[j] = float64(100*r + j)
		}
		recv := make([]float64, n*size)
		if err := c.Allgather(send, recv); err != nil {
			t.Fatal(err)
		}
		// Iallgather of bytes, polled with a context that can end.
		bs, br := []byte(strings.Repeat(string(rune('a'+r)), size)), make([]byte, n*size)
		req, err := c.Iallgather(bs, br)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		err = req.Wait(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for q := range n {
			for j := range size {
				if got, want := recv[q*size+j], float64(100*q+j); got != want {
					t.Fatalf("Allgather of %d: block %d element %d is %v, want %v", size, q, j, got, want)
				}
				if got, want := br[q*size+j], byte('a'+q); got != want {
					t.Fatalf("Iallgather of %d bytes: block %d byte %d is %q, want %q", size, q, j, got, want)
				}
			}
		}

		// Ialltoall: block q of rank r's send goes to rank q as block r.
		a := make([]float32, n*size)
		for q := range n {
			for j := range size {
				a[q*size+j] = float32(1000*r + 10*q + j)
			}
		}
		b, bb := make([]float32, n*size), make([]float32, n*size)
		req, err = c.Ialltoall(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := req.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := c.Alltoall(a, bb); err != nil {
			t.Fatal(err)
		}
		for q := range n {
			for j := range size {
				if got, want := b[q*size+j], float32(1000*q+10*r+j); got != want || bb[q*size+j] != want {
					t.Fatalf("Ialltoall and Alltoall of %d per rank: block %d element %d is %v and %v, want %v", size, q, j, got, bb[q*size+j], want)
				}
			}
		}

		// Bcast from the last rank.
		bc := make([]int64, size)
		for j := range bc {
			bc[j] = int64(r*size + j)
		}
		if err := c.Bcast(bc, n-1); err != nil {
			t.Fatal(err)
		}
		for j := range bc {
			if want := int64((n-1)*size + j); bc[j] != want {
				t.Fatalf("Bcast of %d: element %d is %d, want %d", size, j, bc[j], want)
			}
		}
	}

	// A Dup'd communicator works on its own and closes.
	d, err := c.Dup()
	if err != nil {
		t.Fatal(err)
	}
	one := []float64{1}
	if err := d.Allreduce(one, Sum); err != nil {
		t.Fatal(err)
	}
	if one[0] != float64(n) {
		t.Fatalf("Allreduce on a Dup: %v, want %d", one[0], n)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Allreduce(one, Sum); err == nil {
		t.Fatal("Allreduce on a closed Dup succeeded")
	}
}

// TestCommArguments checks the argument errors that need no other rank.
func TestCommArguments(t *testing.T) {
	c := Single()
	if err := c.Allreduce([]int32{1}, Sum); err == nil || !strings.Contains(err.Error(), "[]int32") {
		t.Errorf("Allreduce of []int32: %v, want an error naming the type", err)
	}
	if err := c.Allgather([]float32{1}, []float64{0}); err == nil || !strings.Contains(err.Error(), "send holds float32, recv float64") {
		t.Errorf("Allgather float32 into float64: %v", err)
	}
	if err := c.Allgather([]float32{1, 2}, []float32{0}); err == nil || !strings.Contains(err.Error(), "want 2") {
		t.Errorf("Allgather into a short buffer: %v", err)
	}
	if err := c.Bcast([]float32{1}, 1); err == nil {
		t.Error("Bcast from rank 1 of 1 succeeded")
	}
	recv := make([]float64, 3)
	if err := c.Allgather([]float64{1, 2, 3}, recv); err != nil || recv[2] != 3 {
		t.Errorf("Single Allgather: %v, %v", recv, err)
	}
	if Sum.String() != "sum" || Op(7).String() != "Op(7)" {
		t.Errorf("Op names: %v, %v", Sum, Op(7))
	}
}
