// Package probe measures what happens inside a network while it trains,
// for experiments about activations and optimizers:
//
//   - Units: dead units, from pre-activation tensors kept with graph.Keep
//     (nn.MLP.Pre). A unit is dead at tolerance tol when |f'(z)| ≤ tol for
//     every probe example: then almost no gradient reaches its incoming
//     weights, whatever the loss. Units also gives max z per unit and the
//     network's own E[f'(z)] and E[f'(z)²].
//   - Moments: running per-element mean, variance and lag-1
//     autocovariance of any sequence of tensor lists (the gradients of
//     every parameter, a momentum buffer), with batch-means blocks for
//     standard errors.
//   - Shadow, Watch, Compare, VarFactor, MeanFactor, WindowFactor, BurnIn:
//     momentum buffers fed the training gradients without moving the
//     model, and their measured moments against the stationary
//     predictions for independent gradients. Watch.Summary gives a
//     window's gradient totals per tensor, the buffer comparisons and
//     (with WatchUnits) the network's own E[f'(z)] and E[f'(z)²].
//   - Sampler: mini-batches drawn with replacement, whose gradients at
//     frozen parameters are independent and identically distributed.
//   - Net, Stream, LoaderStream: a compiled training graph driven batch
//     by batch (Net.Run feeds a Watch and steps an optimizer, or keeps the
//     weights frozen), and its test accuracy.
//   - Neuron, NeuronGrads, NeuronDescent: the single neuron
//     ½(a(w·x + b) − t)², its gradient through the graph in each dtype
//     beside the closed form, and plain gradient descent on it.
//   - Comparison.Cells (under ComparisonHeader), Comparison.Values,
//     Comparison.BlockSeries, Summary.GradName: what a report shows of a
//     window's measurements, as table cells, summary keys and a plot line.
//
// # Dead units and the tolerance
//
// ReLU'(z) is exactly 0 for z ≤ 0 (PyTorch's convention at 0), so a ReLU
// unit is dead at any tolerance in [0, 1) when no probe example gives it a
// positive pre-activation. The smooth activations have no such region:
// GELU'(z) = Φ(z) + z·φ(z) vanishes only at the single point z ≈ −0.7518
// (GELU's minimum), which no set of examples hits exactly, and tends to 0
// like −|z|·φ(z) in the left tail without reaching it; in float64 it
// underflows to 0 only below z ≈ −38.7 (in float32 below z ≈ −14.5, which
// matters for the gradient a float32 network actually receives, not for
// this probe, which evaluates f' in float64). With tol = 0 a GELU, SiLU,
// ELU or Softplus unit is therefore dead only where f' underflows (for
// ELU, SiLU and Softplus, whose f' decays like e^z, below about −740),
// which takes a network whose pre-activations have blown up; a tolerance
// is needed to ask whether a unit is practically dead. Units keeps
// max |f'(z)| per unit, so any tolerance can be applied afterwards;
// DefaultDeadTol = 1e-3 is about a thousandth of the slope of a unit in its
// linear regime, reached by GELU for z < −3.81, by ELU and Softplus for
// z < −6.91 and by SiLU for z < −8.99 (their tails decay like |z|·φ(z)
// and e^z respectively). Near GELU's minimum |f'| is below 1e-3 too, for
// z within about ±0.0023 of −0.7518, but a unit whose every example falls
// there is not a concern in practice.
//
// # Momentum conventions
//
// For gradients g_t that are independent with mean μ and variance σ²
// (per element), a buffer fed them is an AR(1) process with coefficient β
// and, once the start is forgotten (BurnIn),
//
//	EMA        m ← β·m + (1 − β)·g    E[m] = μ           Var(m) = (1 − β)/(1 + β)·σ²
//	HeavyBall  m ← β·m + g            E[m] = μ/(1 − β)   Var(m) = σ²/(1 − β²)
//
// Compare measures both sides on a window of steps. Real training breaks
// the assumption twice: the parameters move, so μ and σ² drift, and
// consecutive gradients are correlated through the trajectory. A Loader's
// batches are dependent as well: an epoch visits each example once, so
// with few batches an epoch the buffer's variance falls below the
// prediction (ExampleWatch uses 200 batches an epoch for this reason).
// Measuring at frozen parameters with a Sampler isolates the formula;
// measuring in a window of real training at a small learning rate shows
// how far it carries over.
//
// An MLP trains on two spirals while a Watch feeds its gradients to an EMA
// and a heavy-ball buffer (ExampleWatch):
//
//	g, _ := graph.New(tensor.Float64, 1)
//	mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{16}, Out: 2})
//	x, _ := g.Input("x", 20, 2)
//	y, _ := g.Input("y", 20)
//	logits, _ := mlp.Forward(x)
//	loss, _ := nn.CrossEntropyLoss(logits, y)
//	net, _ := probe.NewNet(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}, nil)
//	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 2000, Noise: 0.05, Seed: 1})
//	l, _ := datasets.NewLoader(data, datasets.LoaderConfig{BatchSize: 20, Shuffle: true, Seed: 1, Dtype: tensor.Float64})
//
//	w, _ := probe.NewWatch(net.Params, 100, probe.BurnIn(0.9, 1e-4),
//		probe.Buffer{Form: probe.EMA, Beta: 0.9}, probe.Buffer{Form: probe.HeavyBall, Beta: 0.9})
//	if _, err := net.Run(probe.LoaderStream(l), probe.BurnIn(0.9, 1e-4)+1000, w, optim.NewSGD(1e-3)); err != nil {
//		fmt.Println(err)
//		return
//	}
//	s, _ := w.Summary()
//	c := s.Buffers[0] // the EMA buffer over all parameters
//	fmt.Printf("Var(m)/Var(g) = %.4f ± %.4f, expected %.4f (z = %.1f)\n", c.Ratio, c.RatioSE, c.Expected, c.Z())
package probe
