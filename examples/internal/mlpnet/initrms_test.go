package mlpnet

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// The root mean squares InitRMS reports equal those of a float64 forward
// pass written here from the networks' own initial weights.
func TestInitRMS(t *testing.T) {
	acts := []activation.Activation{activation.ReLU, activation.ELU}
	build := func(i int) (train.Model, *nn.MLP, error) {
		return Classifier(tensor.Float64, 7, 2, nn.MLPConfig{In: 2, Hidden: []int{3, 3}, Out: 2, Activation: acts[i]})
	}
	xs := []float64{0.5, -1, 2, 0.25}
	x := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(xs))
	r, err := report.New(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	r.Describe("*", "everything")
	tab, err := InitRMS(r, "init", []string{"relu", "elu"}, []string{"ReLU", "ELU"}, 2, x, build)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"activation", "layer 1", "layer 2", "logits", "factor per layer"}; len(tab.Header) != 5 || tab.Header[3] != want[3] || len(tab.Rows) != 2 {
		t.Fatalf("table %+v", tab)
	}
	for i, a := range acts {
		model, _, _ := build(i)
		w := map[string][]float64{}
		for _, p := range model.Graph.ParamTensors() {
			w[p.Name] = p.Value.Data().([]float64)
		}
		h, want := [][]float64{xs[:2], xs[2:]}, []float64{}
		for l := range 3 {
			wt, b := w["mlp.layers."+string(rune('0'+l))+".weight"], w["mlp.layers."+string(rune('0'+l))+".bias"]
			var ss float64
			for n, row := range h {
				out := make([]float64, len(b))
				for o := range out {
					out[o] = b[o]
					for j, v := range row {
						out[o] += wt[o*len(row)+j] * v
					}
					ss += out[o] * out[o]
					if l < 2 {
						out[o] = a.F(out[o])
					}
				}
				h[n] = out
			}
			want = append(want, math.Sqrt(ss/float64(2*len(b))))
		}
		want = append(want, want[1]/want[0])
		row := tab.Rows[i]
		for k, v := range want {
			if got := row[k+1].(float64); math.Abs(got-v) > 1e-12*v {
				t.Errorf("%s column %q: %v, want %v", a.Name(), tab.Header[k+1], got, v)
			}
		}
		if got := r.Get("init." + a.Name() + ".factor"); math.Abs(got-want[3]) > 1e-12*want[3] {
			t.Errorf("init.%s.factor = %v, want %v", a.Name(), got, want[3])
		}
		if got := r.Get("init." + a.Name() + ".3"); math.Abs(got-want[2]) > 1e-12*want[2] {
			t.Errorf("init.%s.3 (logits) = %v, want %v", a.Name(), got, want[2])
		}
	}
	if _, err := InitRMS(r, "other", []string{"relu"}, []string{"ReLU"}, 3, x, build); err == nil {
		t.Error("3 hidden layers announced for a network of 2: no error")
	}
}
