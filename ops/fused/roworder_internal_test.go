package fused

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/geluproject/gelu/graph/rng"
)

// The row sums (bias gradient, dγ) are split among cores by columns and the
// LayerNorm forward runs two rows at a time; each must give exactly the
// result of the plain loop that adds the rows one by one in order, whatever
// the number of cores and the shape (odd rows and columns too).
func TestRowLoopsKeepTheirOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, s := range [][2]int{{1, 1}, {5, 3}, {7, 300}, {9, 129}, {512, 1024}} {
			rows, n := s[0], s[1]
			name := fmt.Sprintf("procs=%d/%dx%d", procs, rows, n)
			r := rng.New(uint64(rows*n), "roworder")
			x, g := make([]float32, rows*n), make([]float32, rows*n)
			for i := range x {
				x[i], g[i] = float32(3*r.Normal()+1), float32(r.Normal())
			}
			gamma, beta := make([]float32, n), make([]float32, n)
			for j := range gamma {
				gamma[j], beta[j] = float32(r.Normal()), float32(r.Normal())
			}

			want := make([]float32, n)
			for i := 0; i < rows; i++ {
				for j := range want {
					want[j] += x[i*n+j]
				}
			}
			got := make([]float32, n)
			var sb sumRowsBody[float32]
			sb.run(got, x, n)
			sameBits(t, name+"/sumRows", got, want)

			mean, rstd := make([]float64, rows), make([]float64, rows)
			wantY := make([]float32, rows*n)
			for i := 0; i < rows; i++ {
				mean[i], rstd[i] = LayerNormRow(wantY[i*n:(i+1)*n], x[i*n:(i+1)*n], gamma, beta, 1e-5)
			}
			gotY := make([]float32, rows*n)
			gotMean, gotRstd := make([]float64, rows), make([]float64, rows)
			var sk layerNormStatsKernel[float32]
			layerNormStats(&sk, x, gotMean, gotRstd, n, 1e-5)
			var lk layerNormKernel[float32]
			layerNormForward(&lk, gotY, x, gamma, beta, gotMean, gotRstd, n)
			sameBits(t, name+"/LayerNorm", gotY, wantY)
			for i := range mean {
				if gotMean[i] != mean[i] || gotRstd[i] != rstd[i] {
					t.Fatalf("%s: row %d statistics (%v, %v), want (%v, %v)", name, i, gotMean[i], gotRstd[i], mean[i], rstd[i])
				}
			}

			acc := make([]float64, n)
			for i := 0; i < rows; i++ {
				for j := range acc {
					acc[j] += float64(g[i*n+j]) * (float64(x[i*n+j]) - mean[i]) * rstd[i]
				}
			}
			for j := range want {
				want[j] = float32(acc[j])
			}
			var gk layerNormGammaKernel[float32]
			layerNormGradGamma(&gk, got, x, g, mean, rstd, make([]float64, n))
			sameBits(t, name+"/dgamma", got, want)
		}
	}
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d = %v, want %v (bit for bit)", what, i, got[i], want[i])
		}
	}
}
