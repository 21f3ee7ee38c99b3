package bench

// Lone matrix products and the machine's peak: the matmul family times
// one product C = op(A)·op(B) of a training step (FFNProducts,
// MLPProducts) on whatever BLAS the child runs, in GFLOP/s; the peak
// family times gemm's register-only FMA loop (gemm.PeakRun), the rate a
// product's GFLOP/s is a share of.

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// Product is one matrix product C = op(A)·op(B) with op(A) m×k and op(B)
// k×n, op(X) = Xᵀ when TX; Label says where it comes from.
type Product struct {
	M, N, K int
	TA, TB  bool
	Label   string
}

// Args is the product as a matmul workload's args: <m>x<n>x<k>-<op>, op
// one of NN, NT, TN, TT (T: that operand transposed).
func (p Product) Args() string {
	op := func(t bool) string { return map[bool]string{false: "N", true: "T"}[t] }
	return fmt.Sprintf("%dx%dx%d-%s%s", p.M, p.N, p.K, op(p.TA), op(p.TB))
}

// FFNProducts are the six products of the FFN step of shape
// <tokens>x<d>x<dff> (those GEMMs runs): the forward x·W1ᵀ and h·W2ᵀ,
// the backward dy·W2 and dyᵀ·h (W2's gradient), dh·W1 and dhᵀ·x (W1's),
// with x and dy tokens×d, h and dh tokens×dff, W1 dff×d, W2 d×dff.
func FFNProducts(args string) ([]Product, error) {
	var t, d, f int
	if _, err := fmt.Sscanf(args, "%dx%dx%d", &t, &d, &f); err != nil || t < 1 || d < 1 || f < 1 {
		return nil, fmt.Errorf("shape %q, want <tokens>x<d>x<dff> of positive integers", args)
	}
	l := "ffn " + args + " "
	return []Product{{t, f, d, false, true, l + "x·W1ᵀ"}, {t, d, f, false, true, l + "h·W2ᵀ"},
		{t, f, d, false, false, l + "dy·W2"}, {d, f, t, true, false, l + "dyᵀ·h"},
		{t, d, f, false, false, l + "dh·W1"}, {f, d, t, true, false, l + "dhᵀ·x"}}, nil
}

// MLPProducts are the products of the MLP step (784 → 8 × 128 → 10, batch
// 128), three per layer of in → out: the forward x·Wᵀ (batch×out), the
// input's gradient dy·W (batch×in) and the weight's dyᵀ·x (out×in), with
// W out×in. The seven 128 → 128 layers give the same three.
func MLPProducts() []Product {
	var ps []Product
	in := mlpIn
	for i := range mlpDepth + 1 {
		out := mlpWidth
		if i == mlpDepth {
			out = mlpClasses
		}
		l := fmt.Sprintf("mlp %d→%d ", in, out)
		ps = append(ps, Product{mlpBatch, out, in, false, true, l + "x·Wᵀ"}, Product{mlpBatch, in, out, false, false, l + "dy·W"},
			Product{out, in, mlpBatch, true, false, l + "dyᵀ·x"})
		in = out
	}
	return ps
}

// parseProduct reads a matmul workload's args (Product.Args).
func parseProduct(args string) (Product, error) {
	var p Product
	var op string
	shape, op, ok := strings.Cut(args, "-")
	_, err := fmt.Sscanf(shape, "%dx%dx%d", &p.M, &p.N, &p.K)
	if !ok || err != nil || p.M < 1 || p.N < 1 || p.K < 1 || len(op) != 2 || strings.Trim(op, "NT") != "" {
		return Product{}, fmt.Errorf("matmul %q, want <m>x<n>x<k>-<NN|NT|TN|TT> with positive m, n, k", args)
	}
	p.TA, p.TB = op[0] == 'T', op[1] == 'T'
	return p, nil
}

// MatMulWork is a matmul workload's work per step in GFLOP: 2·m·n·k.
func MatMulWork(args string) (float64, error) {
	p, err := parseProduct(args)
	if err != nil {
		return 0, err
	}
	return 2 * float64(p.M) * float64(p.N) * float64(p.K) / 1e9, nil
}

// MatMul is one product C = op(A)·op(B) (args: Product.Args) through
// gemm.Gemm, on seeded N(0, 1) operands, C overwritten (beta 0).
func MatMul(args string, dt tensor.Dtype) (func() error, int, error) {
	p, err := parseProduct(args)
	if err != nil {
		return nil, 0, err
	}
	if dt == tensor.Float32 {
		run, _, _, _ := matMulStep[float32](p)
		return run, 1, nil
	}
	run, _, _, _ := matMulStep[float64](p)
	return run, 1, nil
}

// matMulStep is MatMul's step and its operands A, B (as stored) and C.
func matMulStep[T graph.Float](p Product) (run func() error, a, b, c []T) {
	r := rng.New(1, "matmul")
	a, b, c = make([]T, p.M*p.K), make([]T, p.K*p.N), make([]T, p.M*p.N)
	for _, x := range [][]T{a, b} {
		for i := range x {
			x[i] = T(r.Normal())
		}
	}
	lda, ldb := p.K, p.N // row strides of A (m×k) and B (k×n) as stored
	if p.TA {
		lda = p.M
	}
	if p.TB {
		ldb = p.K
	}
	return func() error {
		return gemm.Gemm(p.TA, p.TB, p.M, p.N, p.K, 1, a, lda, b, ldb, 0, c, p.N)
	}, a, b, c
}

// PeakFlops is what a peak step runs: 1536·2¹⁷ floating-point operations,
// a whole number of iterations of every FMA loop (gemm.PeakGrain divides
// 1536), about 1–2 ms on one core: short, so that of the FastestReps runs
// one is likely undisturbed on a shared machine.
const PeakFlops = 1536 << 17

// PeakWork is the peak family's work per step in GFLOP.
func PeakWork(string) (float64, error) { return PeakFlops / 1e9, nil }

// Peak runs gemm's FMA loop (gemm.PeakRun) for PeakFlops on GOMAXPROCS
// threads; args must be "fma". Where the own GEMM has no assembly it
// fails with gemm.ErrPeakUnknown (a run leaves the peak out there: see
// gemm.PeakISA).
func Peak(args string, dt tensor.Dtype) (func() error, int, error) {
	if args != "fma" {
		return nil, 0, fmt.Errorf("peak %q, want fma", args)
	}
	if _, err := gemm.PeakGrain(dt); err != nil {
		return nil, 0, err
	}
	return func() error {
		_, err := gemm.PeakRun(dt, runtime.GOMAXPROCS(0), PeakFlops)
		return err
	}, 1, nil
}

// Peak is the peak rate for dt on threads threads that t's peak workload
// measured (this project's side at GOMAXPROCS=threads), in GFLOP/s.
func (t Tally) Peak(dt tensor.Dtype, threads int) (float64, bool) {
	res, ok := t[Ours]["peak/fma/"+dt.String()][fmt.Sprintf("GOMAXPROCS=%d", threads)]
	if !ok || res.Seconds <= 0 {
		return 0, false
	}
	return PeakFlops / 1e9 / res.Seconds, true
}

// PeakTable has a row per peak workload of ws: its dtype and the peak
// GFLOP/s at each thread count of threads, also set as summary keys
// peak.fma.<dtype>.gflops_threads_<n>.
func (t Tally) PeakTable(r *report.Report, ws []Workload, threads []int) report.TableData {
	header := []string{"dtype"}
	for _, n := range threads {
		header = append(header, "peak GFLOP/s, "+plural(n, "thread"))
	}
	var rows [][]any
	for _, w := range ws {
		if w.Family.Name != "peak" {
			continue
		}
		row := []any{w.Dtype.String()}
		for _, n := range threads {
			p, ok := t.Peak(w.Dtype, n)
			row = append(row, Optional(ok, p))
			if ok {
				r.Set(fmt.Sprintf("%s.gflops_threads_%d", w.Key(), n), p)
			}
		}
		rows = append(rows, row)
	}
	return report.TableData{Header: header, Rows: rows}
}

// sideWith is the side of this project (Ours or Other) whose children ran
// the BLAS named with prefix, or "".
func (t Tally) sideWith(prefix string) string {
	for _, side := range []string{Ours, Other} {
		if strings.HasPrefix(t.BLAS(side), prefix) {
			return side
		}
	}
	return ""
}

// productThreads is how many threads the matmul workload w ran on at the
// setting set of the BLAS key ("own", "openblas"): the own GEMM, and
// OpenBLAS split over the workers (a setting without "BLAS n threads"),
// keep a product below their split threshold on one thread whatever the
// setting (gemm.OwnThreadsFor, gemm.OpenBLASThreadsFor); OpenBLAS's split
// over threads of its own is not known here, so its setting's count.
func productThreads(key, set string, w Workload) int {
	threads := settingThreads(set)
	p, err := parseProduct(w.Args)
	switch {
	case err != nil:
		return threads
	case key == "own":
		return gemm.OwnThreadsFor(threads, p.TB, p.M, p.N, p.K, w.Dtype)
	case !strings.Contains(set, "BLAS "):
		return gemm.OpenBLASThreadsFor(threads, p.M, p.N, p.K)
	}
	return threads
}

// GEMMTable has a row per matmul workload of ws: the product, its dtype,
// the steps it is in (usedIn), then for the own GEMM and for OpenBLAS,
// whichever of this project's sides ran each (by the BLAS its children
// reported), the GFLOP/s at its best setting, the setting, and the share
// of the peak (Tally.Peak) on the threads the product ran on
// (productThreads), "unknown" with no peak; then the own GEMM's rate ÷
// OpenBLAS's. It sets the summary
// keys <workload key>.own_gflops, .own_setting, .own_pct_peak,
// .openblas_gflops, .openblas_setting, .openblas_pct_peak and
// .own_over_openblas.
func (t Tally) GEMMTable(r *report.Report, ws []Workload, usedIn func(w Workload) string) report.TableData {
	sides := []struct{ side, key string }{{t.sideWith("own GEMM"), "own"}, {t.sideWith("OpenBLAS"), "openblas"}}
	var rows [][]any
	for _, w := range ws {
		if w.Family.Name != "matmul" {
			continue
		}
		row := []any{w.Args, w.Dtype.String(), usedIn(w)}
		var rate [2]float64
		for i, s := range sides {
			set, res, ok := t.Best(s.side, w.Name)
			ok = ok && s.side != ""
			if !ok {
				row = append(row, "—", "—", "—")
				continue
			}
			rate[i] = w.Value(res.Seconds)
			peak, okP := t.Peak(w.Dtype, productThreads(s.key, set, w))
			pct := any("unknown")
			if okP {
				pct = 100 * rate[i] / peak
				r.Set(w.Key()+"."+s.key+"_pct_peak", pct)
			}
			row = append(row, rate[i], set, pct)
			r.Set(w.Key()+"."+s.key+"_gflops", rate[i])
			r.Set(w.Key()+"."+s.key+"_setting", set)
		}
		ok := rate[0] > 0 && rate[1] > 0
		row = append(row, Optional(ok, rate[0]/rate[1]))
		if ok {
			r.Set(w.Key()+".own_over_openblas", rate[0]/rate[1])
		}
		rows = append(rows, row)
	}
	return report.TableData{Rows: rows, Header: []string{"product (m×n×k-op)", "dtype", "in", "own GEMM GFLOP/s", "own GEMM setting",
		"own GEMM % of peak", "OpenBLAS GFLOP/s", "OpenBLAS setting", "OpenBLAS % of peak", "own ÷ OpenBLAS"}}
}
