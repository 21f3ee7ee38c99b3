// Package optim updates parameters in place from their gradients, with
// PyTorch's optimizers (SGD, Adam, AdamW) and parameter groups,
// learning-rate schedules and gradient clipping, for float32 and float64
// tensors.
//
// nanoGPT's optimizer step on a linear regression (Example_nanoGPT runs
// this):
//
//	g, _ := graph.New(tensor.Float64, 1)
//	fc, _ := nn.NewLinear(g, "fc", 3, 2)
//	x, _ := g.Input("x", 4, 3)
//	y, _ := g.Input("y", 4, 2)
//	out, _ := fc.Forward(x)
//	loss, _ := nn.MSELoss(out, y)
//	m, _ := g.Compile(loss)
//	m.Set(x, tensor.New(tensor.WithShape(4, 3), tensor.WithBacking([]float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})))
//	m.Set(y, tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float64{1, -1, 2, 0, 0, 1, 3, 0})))
//
//	params := g.ParamTensors()
//	opt := optim.NanoGPTAdamW(params, 0.05, 0.1) // AdamW, betas (0.9, 0.95), decay on matrices only
//	decay, _ := optim.Cosine(0.05, 400, 0.005)
//	sched, _ := optim.Warmup(decay, 20)
//	for step := range 400 {
//		if err := m.Run(); err != nil { // forward and backward
//			fmt.Println(err)
//			return
//		}
//		grads, _ := m.Grads()
//		norm, _ := optim.ClipGradNorm(grads, 1.0) // the norm before clipping, for the log
//		opt.SetLR(sched.LR(step))
//		if err := opt.Step(params, grads); err != nil { // a NaN or ±Inf gradient, named
//			fmt.Println(err)
//			return
//		}
//		if step%200 == 0 || step == 399 {
//			l, _ := m.Loss()
//			fmt.Printf("step %d: loss %.3g, gradient norm %.3g\n", step, l, norm)
//		}
//	}
//	fmt.Println(opt.Groups)
//
// # Parameter groups
//
// An optimizer's Groups are PyTorch's param_groups: each Group names its
// parameters and sets some hyperparameters with Options (LRScale,
// WeightDecay, Betas, Eps, AMSGrad, Momentum, Dampening, Nesterov,
// Maximize); the rest follow the optimizer's fields. Every parameter passed
// to Step must be in exactly one group. DecayGroups is nanoGPT's
// configure_optimizers grouping (weight decay on the parameters of two or
// more dimensions, none on biases and LayerNorm weights) and NanoGPTAdamW
// the whole optimizer it builds. A schedule scales every group's rate by
// the same factor, as PyTorch's LambdaLR: a group's rate is LR() times its
// LRScale (Group has the details). State keys are per parameter, so a
// checkpoint's state does not depend on the groups.
//
// # Zero values
//
// The zero value of SGD is torch.optim.SGD's defaults with a learning rate
// of 0 (PyTorch has no default rate). Adam has no usable zero value: its
// defaults (betas 0.9 and 0.999, eps 1e-8) are not zeros, and a zero β is
// a valid setting of its own, so NewAdam and NewAdamW are required and an
// Adam made otherwise is an error at Step, Validate and LoadState. Every
// field then means its value: Beta2 = 0 is β2 = 0, and Eps must be > 0
// (eps = 0 divides 0 by 0 where a gradient has always been 0). A Group's
// zero value is an empty group; the zero Option is an error, not
// LRScale(0).
//
// # Update rules
//
// Each optimizer reproduces its PyTorch 1.13 counterpart (the single-tensor
// code path) operation for operation; float64 trajectories agree with
// PyTorch's to about 1e-13 relative (the tests compare to 1e-12 against a
// fixture PyTorch wrote, testdata/torch_optim.json, with the script that
// wrote it). For one parameter p
// with gradient g at step t = 1, 2, …, learning rate lr and weight decay λ:
//
// SGD (torch.optim.SGD), momentum μ, buffer b:
//
//	d = g + λ·p
//	b = d                         at the parameter's first step
//	b = μ·b + (1 − dampening)·d   afterwards
//	d = d + μ·b   (Nesterov)   or   d = b
//	p = p − lr·d
//
// The first buffer is the gradient itself, not (1 − dampening)·d: that is
// PyTorch's choice, kept here, and it makes the EMA form below start
// unbiased (for a constant gradient b_t = g from the first step).
//
// Adam (torch.optim.Adam), moments m, v starting at 0:
//
//	g = g + λ·p                        (L2 penalty through the gradient)
//	m = β1·m + (1 − β1)·g
//	v = β2·v + (1 − β2)·g²             (AMSGrad: also v̄ = max(v̄, v), used below for v)
//	p = p − (lr/(1 − β1^t))·m / (√v/√(1 − β2^t) + eps)
//
// AdamW (torch.optim.AdamW, an Adam with Decoupled set): p = (1 − lr·λ)·p
// first, then the Adam update with λ = 0. The step t is counted per
// parameter, as in PyTorch.
//
// With AMSGrad the maximum is taken of the raw v and bias-corrected with
// the current step, as PyTorch 1.13's code does (its documentation writes
// the maximum of the corrected v̂ instead).
//
// # Momentum conventions
//
// The same buffer gives the two momentum forms of the literature:
//
//	setting                       buffer b_t                       for a constant gradient g
//	Dampening = 0 (heavy ball)    μ·b + g                          g·(1 − μ^t)/(1 − μ) → g/(1 − μ)
//	Dampening = μ = β (EMA)       β·b + (1 − β)·g                  g at every step
//	Nesterov (Dampening = 0)      heavy-ball b; steps by g + μ·b
//
// For gradients that are independent with mean 0 and E[g²] = σ², the EMA
// buffer's variance is σ²·(β^(2(t−1)) + (1 − β)²(1 − β^(2(t−1)))/(1 − β²)),
// tending to (1 − β)/(1 + β)·σ²; the heavy-ball buffer's is
// σ²(1 − μ^(2t))/(1 − μ²) → σ²/(1 − μ²). The heavy-ball form takes steps
// 1/(1 − μ) times larger at the same lr. SGD.MomentumBuffers gives the live
// buffers for such measurements (TestSGDMomentumBufferVariance checks both
// formulas).
//
// # Guarantees
//
// Step checks everything before it writes: hyperparameters, argument
// lengths, unique parameter names, groups, dtypes, shapes, contiguity, that
// every gradient is finite, and that existing state fits. A NaN or ±Inf
// gradient is an error naming the parameter and element (wrapping
// graph.ErrNonFinite), and then no parameter and no state has changed, so
// the caller may skip the batch. This is the one scan of the gradients a
// training step needs: a loop that calls Step need not scan them itself
// (graph.Machine.CheckFinite stays for the loss and for inspection), and
// GradNorm and ClipGradNorm detect a non-finite element from their sum
// without a scan of their own. If finite gradients still produce a
// non-finite parameter (a learning rate far too large), the step is applied
// and the error wraps ErrNonFiniteParam. A nil gradient skips its parameter,
// like a parameter whose .grad is None.
//
// State is allocated on a parameter's first step and keyed by its name;
// State exposes it under PyTorch's keys ("<param>.momentum_buffer",
// "<param>.step", "<param>.exp_avg", "<param>.exp_avg_sq",
// "<param>.max_exp_avg_sq"; "step" is a float64 tensor of shape (1) where
// PyTorch keeps a float32 scalar), and LoadState restores it so that a
// resumed run continues bit for bit. LoadState validates every tensor
// against the parameters and their groups before it changes anything: a
// corrupt entry leaves the existing state as it was.
//
// float32 parameters are updated in float32 arithmetic, as PyTorch's CPU
// kernels do, with hyperparameters and bias corrections computed in float64
// and rounded once per step; about 90% of float32 values in the fixture
// match PyTorch's bit for bit, the rest within a few ulps (PyTorch fuses
// some multiply-adds).
//
// Each tensor is updated in one pass (after one read-only pass over the
// gradients for the NaN check), split into contiguous chunks across cores
// for large tensors; updates are elementwise, so results do not depend on
// the number of cores. On amd64 both passes run package simd's AVX-512 or
// AVX2 kernels, which give the portable loops' results bit for bit
// (GELU_KERNELS=generic selects the loops). Once every parameter has
// its state, Step allocates nothing. An optimizer must not be used from
// several goroutines at once.
//
// Hyperparameters are plain fields (and group Options), validated for
// every group by every Step with PyTorch's rules plus finiteness (PyTorch
// lets a NaN learning rate through) and two stricter ones: Adam's Eps must
// be > 0, and AdamW's lr·λ must be ≤ 1. The field is LearningRate, not LR,
// because LR is the Optimizer method.
//
// # Schedules, clipping and the gradient norm
//
// Schedules are functions of the step (Constant, StepLR, Warmup, Cosine,
// LinearDecay), so resuming needs no scheduler state; see each for its
// exact formula and how it relates to torch.optim.lr_scheduler.
// ClipGradNorm is torch.nn.utils.clip_grad_norm_ with the L2 norm summed in
// float64 in fixed-size blocks (the same bits on any number of cores), and
// an error instead of NaN-scaled gradients when the norm is not finite.
// GradNorm is the same norm without clipping, bit for bit: a training loop
// logs ClipGradNorm's result when it clips and GradNorm's when it does not,
// so the logged norm does not depend on whether it clips. Both skip nil
// gradients, as Step does.
//
// # Compared with gorgonia's solvers
//
// gorgonia v0.9.18 has its own solvers (solvers.go); its Momentum differs
// from SGD here as follows.
//
//   - The learning rate is folded into the velocity: it computes
//     v = μ·v − η·g and w = w + v, starting from v = 0. For a constant η and
//     no regularization that is heavy-ball SGD (v = −η·b), but changing η
//     rescales only new gradients, whereas PyTorch's buffer excludes lr and
//     a new lr applies to the whole step. It has no dampening and no
//     Nesterov option; the defaults are η = 0.001 and μ = 0.9.
//   - Gradients are read through the ValueGrad interface: Node.Grad returns
//     the node's dual value (a machine run with BindDualValues) or the value
//     of a gradient node attached by gorgonia.Grad. This project's
//     graph.Grad and Machine use neither, so the solvers find no gradient on
//     its parameters ("No Gradient node/value found").
//   - It changes the gradient in place (adds the regularization, divides by
//     the batch size when WithBatchSize > 1, clamps each element to
//     [−clip, clip] when WithClip is set — value clipping, not norm
//     clipping — then multiplies it by −η) and zeroes it at the end.
//   - For *tensor.Dense weights, WithL2Reg adds l2·v and WithL1Reg adds
//     l1·sign(v) to the gradient, v being the velocity, not the weights; its
//     scalar (F32/F64) path uses the weights.
//   - State is a slice indexed by the position of each node in the slice
//     passed to Step, sized by the first call (a longer slice later indexes
//     past its end), unexported and not checkpointable. Each step makes several full passes per tensor and
//     allocates temporaries for the regularization terms.
package optim
