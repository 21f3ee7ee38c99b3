package bench_test

// The package comment's sketch, compiled: a benchmark program in a few lines
// (examples/benchmark is this, with flags and a report template).

import (
	"os"

	"github.com/geluproject/gelu/train/bench"
	"github.com/geluproject/gelu/train/report"
)

var families = bench.Families{ // the workload table: one row per family
	{Name: "ffn", Unit: "ms", BLAS: true, About: "training step of the feed-forward block", Build: bench.FFN},
	{Name: "gpt", Unit: "tokens/s", BLAS: true, Work: bench.GPTWork, About: "…", Build: bench.GPT},
}

func main() {
	if code, ok := bench.Child(families); ok { // this process is a child timing one workload
		os.Exit(code)
	}
	ws, _ := families.ParseAll([]string{"ffn/512x256x1024/float32", "gpt/L4-d256-h8-T128-B16/float32"})
	py, _ := bench.FindPython("auto")
	torch, _ := bench.StartPeers(py, "bench_torch.py", 7, bench.PeerSettings([]int{1, 2}))
	defer torch.Close()
	def, _, _ := bench.MachineBLAS() // the default BLAS (and the other one, to compare)
	t, _ := bench.Run(ws, []bench.Side{
		def.Side(bench.Ours, 7, func(w bench.Workload) []bench.Setting { // children on def, checked
			return def.Settings([]int{1, 2}, w)
		}),
		torch.Side(),
	}, 3, os.Stderr) // 3 rounds, progress on stderr
	r, _ := report.New("out/benchmark", "Benchmark")
	d := t.Overview(r, ws, "PyTorch "+torch.Info().Torch) // sets its summary keys
	r.Table("benchmark", d.Header, d.Rows)                // or {{table "benchmark" .Overview}} in a template
	r.Describe("*", "…")
	r.Close()
}
