package bench_test

import (
	"fmt"

	"github.com/geluproject/gelu/train/bench"
	"gorgonia.org/tensor"
)

// A workload table of two families, a name parsed, the best of two
// settings over two rounds, in the family's unit, and the settings of a
// workload with matrix products on OpenBLAS forced (the other BLAS where
// the default is the own GEMM): OpenBLAS on one thread with the products
// split over GOMAXPROCS workers (nothing set), or on threads of its own.
func Example() {
	families := bench.Families{
		{Name: "gelu", Unit: "Melem/s", Work: bench.GELUWork, Build: bench.GELU},
		{Name: "ffn", Unit: "ms", BLAS: true, Build: bench.FFN},
	}
	w, err := families.Parse("gelu/exact/float32")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Family.Name, w.Args, w.Dtype == tensor.Float32, w.Work, "Melem a step")

	t := bench.Tally{}
	t.Add(bench.Ours, w.Name, "GOMAXPROCS=1", bench.Result{Seconds: 0.008}) // round 1
	t.Add(bench.Ours, w.Name, "GOMAXPROCS=2", bench.Result{Seconds: 0.005})
	t.Add(bench.Ours, w.Name, "GOMAXPROCS=1", bench.Result{Seconds: 0.009}) // round 2: slower, not kept
	t.Add(bench.Ours, w.Name, "GOMAXPROCS=2", bench.Result{Seconds: 0.004})
	setting, r, _ := t.Best(bench.Ours, w.Name)
	fmt.Printf("best: %s, %.1f %s\n", setting, w.Value(r.Seconds), w.Family.Unit)
	ffn, _ := families.Parse("ffn/512x256x1024/float32")
	openBLAS := bench.BLAS{Name: "OpenBLAS", Env: []string{"GELU_BLAS=openblas"}, OpenBLAS: true}
	for _, s := range openBLAS.Settings([]int{1, 2}, ffn) {
		fmt.Println(s.Name, s.Env)
	}
	// Output:
	// gelu exact true 4.194304 Melem a step
	// best: GOMAXPROCS=2, 1048.6 Melem/s
	// GOMAXPROCS=1 [GOMAXPROCS=1 GELU_BLAS=openblas]
	// GOMAXPROCS=1, BLAS 1 thread [GOMAXPROCS=1 GELU_BLAS=openblas OPENBLAS_NUM_THREADS=1]
	// GOMAXPROCS=1, BLAS 2 threads [GOMAXPROCS=1 GELU_BLAS=openblas OPENBLAS_NUM_THREADS=2]
	// GOMAXPROCS=2 [GOMAXPROCS=2 GELU_BLAS=openblas]
	// GOMAXPROCS=2, BLAS 1 thread [GOMAXPROCS=2 GELU_BLAS=openblas OPENBLAS_NUM_THREADS=1]
	// GOMAXPROCS=2, BLAS 2 threads [GOMAXPROCS=2 GELU_BLAS=openblas OPENBLAS_NUM_THREADS=2]
}
