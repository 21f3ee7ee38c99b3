package dist

import (
	"strings"
	"testing"
)

// TestShard checks that the shares tile [0, n) in rank order, differ in
// size by at most one (the larger ones first), and are B each for n = N·B.
func TestShard(t *testing.T) {
	for size := 1; size <= 9; size++ {
		for n := 0; n <= 40; n++ {
			next := 0
			for r := range size {
				lo, hi, err := Shard(n, r, size)
				if err != nil {
					t.Fatal(err)
				}
				if lo != next || hi < lo {
					t.Fatalf("Shard(%d, %d, %d) = [%d, %d), want to start at %d", n, r, size, lo, hi, next)
				}
				want := n / size
				if r < n%size {
					want++
				}
				if hi-lo != want {
					t.Fatalf("Shard(%d, %d, %d) has %d rows, want %d", n, r, size, hi-lo, want)
				}
				next = hi
			}
			if next != n {
				t.Fatalf("Shard(%d, ·, %d) covers [0, %d)", n, size, next)
			}
		}
	}
	// The uneven example of the documentation.
	for r, want := range [][2]int{{0, 22}, {22, 43}, {43, 64}} {
		if lo, hi, _ := Shard(64, r, 3); lo != want[0] || hi != want[1] {
			t.Errorf("Shard(64, %d, 3) = [%d, %d), want %v", r, lo, hi, want)
		}
	}
	for _, bad := range [][3]int{{-1, 0, 1}, {4, 0, 0}, {4, 2, 2}, {4, -1, 2}} {
		if _, _, err := Shard(bad[0], bad[1], bad[2]); err == nil || !strings.Contains(err.Error(), "want") {
			t.Errorf("Shard%v: %v, want an error", bad, err)
		}
	}
}
