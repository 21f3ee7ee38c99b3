// Recompute measures what activation recomputation (nn.GPTConfig.Recompute,
// nn.Stack) saves and costs: peak resident memory and time per training
// step of a GPT, plain and recomputed, each in a process of its own so that
// the peak (VmHWM) belongs to one setting.
//
//	go run ./examples/recompute                 # 8 blocks, d 256, 8 heads, T 256, batch 16, float32
//	go run ./examples/recompute -blocks 4 -t 128
//
// It prints a markdown table: peak RSS, time per step (median of -steps
// after one warm-up step) and the ratios recomputed/plain.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/bench"
	"gorgonia.org/tensor"
)

type config struct {
	Blocks, Dim, Heads, T, Batch, Vocab, Steps int
}

func main() {
	var c config
	flag.IntVar(&c.Blocks, "blocks", 8, "Transformer blocks")
	flag.IntVar(&c.Dim, "dim", 256, "model width")
	flag.IntVar(&c.Heads, "heads", 8, "attention heads")
	flag.IntVar(&c.T, "t", 256, "sequence length")
	flag.IntVar(&c.Batch, "batch", 16, "sequences per batch")
	flag.IntVar(&c.Vocab, "vocab", 256, "vocabulary size")
	flag.IntVar(&c.Steps, "steps", 3, "timed training steps after one warm-up step")
	child := flag.String("child", "", "internal: run one setting (plain or recompute) and print its measurements")
	flag.Parse()
	if *child != "" {
		if err := measure(c, *child == "recompute"); err != nil {
			fmt.Fprintln(os.Stderr, "recompute:", err)
			os.Exit(1)
		}
		return
	}
	rows := map[string][2]float64{}
	for _, mode := range []string{"plain", "recompute"} {
		args := append(os.Args[1:], "-child", mode)
		out, err := exec.Command(os.Args[0], args...).Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "recompute: %s: %v\n", mode, err)
			os.Exit(1)
		}
		var rss, sec float64
		if _, err := fmt.Sscan(string(out), &rss, &sec); err != nil {
			fmt.Fprintf(os.Stderr, "recompute: %s printed %q\n", mode, out)
			os.Exit(1)
		}
		rows[mode] = [2]float64{rss, sec}
	}
	p, r := rows["plain"], rows["recompute"]
	fmt.Printf("GPT training step, %d blocks, d %d, %d heads, T %d, batch %d, vocabulary %d, float32, AdamW; %s\n\n",
		c.Blocks, c.Dim, c.Heads, c.T, c.Batch, c.Vocab, gemm.Name())
	fmt.Println("| | peak RSS (MB) | time per step (s) |")
	fmt.Println("| --- | --- | --- |")
	fmt.Printf("| plain | %.0f | %.3f |\n", p[0], p[1])
	fmt.Printf("| recomputed | %.0f | %.3f |\n", r[0], r[1])
	fmt.Printf("| recomputed / plain | %.2f (%s) | %.2f (%s) |\n", r[0]/p[0], change(r[0]/p[0]), r[1]/p[1], change(r[1]/p[1]))
}

// measure trains the model for 1 + c.Steps steps and prints the peak RSS in
// MB and the median step time in seconds.
func measure(c config, recompute bool) error {
	g, err := graph.New(tensor.Float32, 1)
	if err != nil {
		return err
	}
	m, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: c.T, VocabSize: c.Vocab, Layers: c.Blocks, Heads: c.Heads, Dim: c.Dim,
		Recompute: recompute})
	if err != nil {
		return err
	}
	ids, _ := g.Input("ids", c.Batch, c.T)
	tg, _ := g.Input("targets", c.Batch, c.T)
	_, loss, err := m.Loss(ids, tg)
	if err != nil {
		return err
	}
	mc, err := g.Compile(loss)
	if err != nil {
		return err
	}
	r := rng.New(1, "tokens")
	idv, tgv := make([]float32, c.Batch*c.T), make([]float32, c.Batch*c.T)
	for i := range idv {
		idv[i], tgv[i] = float32(r.IntN(c.Vocab)), float32(r.IntN(c.Vocab))
	}
	if err := mc.Set(ids, tensor.New(tensor.WithShape(c.Batch, c.T), tensor.WithBacking(idv))); err != nil {
		return err
	}
	if err := mc.Set(tg, tensor.New(tensor.WithShape(c.Batch, c.T), tensor.WithBacking(tgv))); err != nil {
		return err
	}
	opt := optim.NewAdamW(1e-3)
	params := g.ParamTensors()
	var times []float64
	for s := 0; s <= c.Steps; s++ {
		start := time.Now()
		g.SetStep(s)
		if err := mc.Run(); err != nil {
			return err
		}
		grads, err := mc.Grads()
		if err != nil {
			return err
		}
		if err := opt.Step(params, grads); err != nil {
			return err
		}
		if s > 0 {
			times = append(times, time.Since(start).Seconds())
		}
	}
	rss := bench.PeakRSS()
	if rss == 0 {
		return fmt.Errorf("no peak resident memory (VmHWM in /proc/self/status): Linux only")
	}
	fmt.Println(rss, bench.Median(times))
	return nil
}

// change says a ratio as a percentage more or less: 0.38 is "62% less".
func change(ratio float64) string {
	if ratio < 1 {
		return fmt.Sprintf("%.0f%% less", 100*(1-ratio))
	}
	return fmt.Sprintf("%.0f%% more", 100*(ratio-1))
}
