package nn_test

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/nn"
	"gorgonia.org/tensor"
)

// ScoreLogits against closed forms: a row (0, ln 3) has softmax (1/4,
// 3/4), so its cross-entropy is ln 4 at label 0 and ln(4/3) at label 1; a
// row of equal logits predicts class 0 and costs ln(classes).
func TestScoreLogits(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			vals := []float64{0, math.Log(3), 0, math.Log(3), 5, 5, 1e4, -1e4}
			logits := tensor.New(tensor.Of(dt), tensor.WithShape(2, 2, 2))
			for i, v := range vals {
				if dt == tensor.Float32 {
					logits.Float32s()[i] = float32(v)
				} else {
					logits.Float64s()[i] = v
				}
			}
			got, err := nn.ScoreLogits(nil, logits, []int{0, 1, -1, 1}, -1)
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-15
			if dt == tensor.Float32 {
				tol = 1e-7 // ln 3 rounded to float32
			}
			want := []nn.LogitScore{{math.Log(4), false}, {math.Log(4.0 / 3), true}, {2e4, false}}
			if len(got) != len(want) {
				t.Fatalf("%d scores, want %d (the label -1 skipped)", len(got), len(want))
			}
			for i := range want {
				if math.Abs(got[i].Loss-want[i].Loss) > tol*max(1, want[i].Loss) || got[i].Hit != want[i].Hit {
					t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
				}
			}
			if _, err := nn.ScoreLogits(nil, logits, []int{0, 2}, -1); err == nil || !strings.Contains(err.Error(), "label 2 of row 1") {
				t.Errorf("label out of range: %v", err)
			}
			if _, err := nn.ScoreLogits(nil, logits, []int{0, 1, 0, 0, 0}, -1); err == nil {
				t.Error("5 labels for 4 rows: no error")
			}
		})
	}
}
