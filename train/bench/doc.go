// Package bench measures training steps of this project side by side with
// another framework's (PyTorch), each at its best thread setting: the
// machinery of examples/benchmark, whose main reads as the description of
// the benchmark (which workloads, which settings, run, write the report).
//
//	var families = bench.Families{ // the workload table: one row per family
//		{Name: "ffn", Unit: "ms", BLAS: true, About: "training step of the feed-forward block", Build: bench.FFN},
//		{Name: "gpt", Unit: "tokens/s", BLAS: true, Work: bench.GPTWork, About: "…", Build: bench.GPT},
//	}
//
//	func main() {
//		if code, ok := bench.Child(families); ok { // this process is a child timing one workload
//			os.Exit(code)
//		}
//		ws, _ := families.ParseAll([]string{"ffn/512x256x1024/float32", "gpt/L4-d256-h8-T128-B16/float32"})
//		py, _ := bench.FindPython("auto")
//		torch, _ := bench.StartPeers(py, "bench_torch.py", 7, bench.PeerSettings([]int{1, 2}))
//		defer torch.Close()
//		def, _, _ := bench.MachineBLAS() // the default BLAS (and the other one, to compare)
//		t, _ := bench.Run(ws, []bench.Side{
//			def.Side(bench.Ours, 7, func(w bench.Workload) []bench.Setting { // children on def, checked
//				return def.Settings([]int{1, 2}, w)
//			}),
//			torch.Side(),
//		}, 3, os.Stderr) // 3 rounds, progress on stderr
//		r, _ := report.New("out/benchmark", "Benchmark")
//		d := t.Overview(r, ws, "PyTorch "+torch.Info().Torch) // sets its summary keys
//		r.Table("benchmark", d.Header, d.Rows)                // or {{table "benchmark" .Overview}} in a template
//		r.Describe("*", "…")
//		r.Close()
//	}
//
// A workload is named <family>/<args>/<dtype>, the same name on both
// sides: "ffn/512x256x1024/float32" is the Family "ffn" built by its Build
// from the args "512x256x1024" in float32. The steps here (GELU, Copy,
// FFN, GEMMs, MLP, GPT, MatMul, Peak) are the Builds of
// examples/benchmark's table; bench_torch.py there builds the same ones in
// PyTorch but for MatMul (one product of FFNProducts or MLPProducts, on
// each of this project's BLAS) and Peak (gemm's FMA loop, the machine's
// peak rate), whose families are NoPeer.
//
// This project runs on the machine's default BLAS (gemm.Name: what a user
// gets, no GELU_BLAS set), the side Ours, and optionally on the other one
// (MachineBLAS: OpenBLAS where the default is the own GEMM, else the own
// GEMM), the side Other, decided once per process; BLAS.Side checks that
// every child ran on its side's BLAS, and the tables head their columns
// with the BLAS the children reported (Tally.Column). This project's
// settings (BLAS.Settings) are environments: GOMAXPROCS, on OpenBLAS
// optionally OPENBLAS_NUM_THREADS (its own threads rather than the
// workers), and GELU_BLAS=… for the other BLAS. The peer's (PeerSettings)
// are as installed, nothing set, then every pair of an intra-op and a BLAS
// thread count, chosen independently, which the peer's script applies. No
// process inherits a thread count from the parent's environment: each gets
// exactly its setting's. This project's side runs each workload at each
// setting in a child process, the program's own executable started with the workload named
// in the environment (Child, Measure), so that the setting applies from
// the start and the peak RSS is the workload's own; a child reports the
// median of its timed runs after Warmup runs (Time) with its allocations
// per step. The peer runs one process per setting that serves workloads
// one at a time (StartPeers; the protocol is in peer.go), so the sides
// alternate workload by workload with the framework imported once.
//
// Run repeats every measurement for a number of rounds; a Tally keeps each
// (side, workload, setting) at its best round (on a shared machine the
// least-disturbed round is the most repeatable figure), and a setting over
// Hopeless times slower than its side's best is not run again. Each side
// is reported at its best setting, named (Tally.Best). Overview, Pairs,
// GEMMTable (each product's GFLOP/s on the own GEMM and on OpenBLAS, as a
// share of the peak), PeakTable and SettingsTable turn a Tally into a
// report's tables and summary keys; ThisMachine describes where it ran.
package bench
