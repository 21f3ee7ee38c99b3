package nn_test

// Generation speed with and without the key-value cache, at char-gpt's
// model size (examples/char-gpt defaults: d = 48, 4 heads, 2 blocks, MLP
// 192, float32, tied weights; a vocabulary of 80 characters), 256 new
// tokens per generation:
//
//	go test ./nn -run '^$' -bench Generate -benchtime 2x
//
// "window32" is char-gpt itself: T = 32 and a prompt of 32, so the window
// slides at every token and the cache runs the whole window each time
// (plain Go instead of the graph machine); "window288" has room for the
// prompt and all 256 new tokens, so each token computes one position.

import (
	"fmt"
	"testing"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"gorgonia.org/tensor"
)

func BenchmarkGenerate(b *testing.B) {
	const prompt, n = 32, 256
	for _, t := range []int{32, prompt + n} {
		cfg := nn.GPTConfig{BlockSize: t, VocabSize: 80, Layers: 2, Heads: 4, Dim: 48, Hidden: 192}
		g, _ := graph.New(tensor.Float32, 1)
		m, err := nn.NewGPT(g, "", cfg)
		if err != nil {
			b.Fatal(err)
		}
		start := kvSequence(prompt, cfg.VocabSize, 1)
		for _, path := range []string{"uncached", "cached"} {
			b.Run(fmt.Sprintf("window%d/%s", t, path), func(b *testing.B) {
				newNext := m.NextToken // the default: with the cache
				if path == "uncached" {
					newNext = m.NextTokenUncached
				}
				next, err := newNext()
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				begin, cpu := time.Now(), processCPU()
				for i := 0; i < b.N; i++ {
					s, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0.8, Seed: 1})
					if _, err := nn.Generate(next, start, n, s); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/time.Since(begin).Seconds(), "tokens/s")
				if cpu > 0 {
					b.ReportMetric((processCPU()-cpu)*1e6/float64(b.N*n), "cpu-µs/token")
				}
			})
		}
	}
}
