package torchtest

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/graphtest"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Python returns a python3 that can import torch and numpy (the one on
// PATH, else /usr/bin/python3), or skips t with a message that starts
// with what.
func Python(t testing.TB, what string) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import torch, numpy").Run() == nil {
			return py
		}
	}
	t.Skipf("%s skipped: no python3 with torch and numpy (Debian: apt-get install python3-torch)", what)
	return ""
}

// WriteInputs writes a parity script's inputs into dir: g's parameters
// as init.safetensors, batches as batches.safetensors and config as
// config.json.
func WriteInputs(t testing.TB, dir string, g *graph.Graph, batches []graph.NamedTensor, config any) {
	t.Helper()
	if err := train.SaveGraphWeights(filepath.Join(dir, "init.safetensors"), g); err != nil {
		t.Fatal(err)
	}
	if err := safetensors.Save(filepath.Join(dir, "batches.safetensors"), batches, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Train compiles loss on g and takes one optimizer step per pair of
// batches (x.<i> and y.<i> at batches[2i] and batches[2i+1], set to x and
// y), clipping the gradients' norm to clip first if clip > 0. It returns
// every step's loss and, if clip > 0, every step's norm before clipping.
func Train(t testing.TB, g *graph.Graph, x, y, loss *G.Node, batches []graph.NamedTensor, opt optim.Optimizer, clip float64) (losses, norms []float64) {
	t.Helper()
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	params := g.ParamTensors()
	for i := 0; i+1 < len(batches); i += 2 {
		if err := m.Set(x, batches[i].Value); err != nil {
			t.Fatal(err)
		}
		if err := m.Set(y, batches[i+1].Value); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		l, err := m.Loss()
		if err != nil {
			t.Fatal(err)
		}
		grads, err := m.Grads()
		if err != nil {
			t.Fatal(err)
		}
		if clip > 0 {
			norm, err := optim.ClipGradNorm(grads, clip)
			if err != nil {
				t.Fatal(err)
			}
			norms = append(norms, norm)
		}
		if err := opt.Step(params, grads); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, l)
	}
	return losses, norms
}

// Result is a script's losses.json.
type Result struct {
	Losses []float64 // the training loss of every step
	Norms  []float64 // the gradient norm before clipping of every step, where the test clips
	Torch  string    // torch.__version__
}

// Run runs the script (a path) with py on dir and returns its
// losses.json; it fails t if the script fails or there are not steps
// losses.
func Run(t testing.TB, py, script, dir string, steps int) Result {
	t.Helper()
	if out, err := exec.Command(py, script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(script), err, out)
	}
	var res Result
	raw, _ := os.ReadFile(filepath.Join(dir, "losses.json"))
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Losses) != steps {
		t.Fatalf("losses.json: %v (%d losses, want %d)", err, len(res.Losses), steps)
	}
	return res
}

// CompareLosses fails t for every step whose Go loss differs from
// PyTorch's by more than tol relative, and returns the largest relative
// difference.
func CompareLosses(t testing.TB, goLosses, torchLosses []float64, tol float64) float64 {
	t.Helper()
	worst := 0.0
	for i := range goLosses {
		rel := math.Abs(goLosses[i]-torchLosses[i]) / math.Abs(torchLosses[i])
		worst = math.Max(worst, rel)
		if rel > tol {
			t.Errorf("step %d: Go loss %.17g, PyTorch %.17g (relative difference %.2g)", i, goLosses[i], torchLosses[i], rel)
		}
	}
	return worst
}

// CheckTorchInit loads the script's torch_init.safetensors into g, runs
// out with x set to x0, and fails t unless every value agrees with
// torch_forward.json to tol relative (to 1 at the least).
func CheckTorchInit(t testing.TB, dir string, g *graph.Graph, x, out *G.Node, x0 *tensor.Dense, tol float64) {
	t.Helper()
	if err := train.LoadGraphWeights(filepath.Join(dir, "torch_init.safetensors"), g); err != nil {
		t.Fatal(err)
	}
	got := graphtest.Output(t, g, x, out, x0)
	var fwd struct{ Output []float64 }
	raw, _ := os.ReadFile(filepath.Join(dir, "torch_forward.json"))
	if err := json.Unmarshal(raw, &fwd); err != nil {
		t.Fatalf("torch_forward.json: %v", err)
	}
	if len(got) != len(fwd.Output) {
		t.Fatalf("output has %d values, PyTorch %d", len(got), len(fwd.Output))
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(got[i]-fwd.Output[i])/math.Max(1, math.Abs(fwd.Output[i])))
	}
	if worst > tol {
		t.Errorf("PyTorch-initialized model: output differs by %.2g (relative, floor 1), want at most %.2g", worst, tol)
	}
	t.Logf("PyTorch-initialized model: %d values, worst difference %.2g", len(got), worst)
}
