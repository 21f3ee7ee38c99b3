package simd

// The optimizer update kernels: one SGD and one Adam/AdamW step over a
// tensor, for package optim, and the scan for the first NaN or ±Inf that
// checks its gradients (FirstNonFinite32 and FirstNonFinite64). Unlike the activation kernels they have no
// exceptions: every option is vectorized and the result is the scalar loop
// of optim/kernels.go bit for bit (NaN lanes are NaN there too, though the
// payload of a NaN made from two NaNs may differ, as between compilers),
// so a caller uses the kernel when SGD32 and friends report ok and its own
// loop otherwise.

// UpdateFlags are the options of an update kernel, set as the scalar loop
// decides them (from the hyperparameters rounded to the parameter's dtype).
type UpdateFlags uint8

// The options. An unset flag skips its operation entirely, as the scalar
// loop does: adding λ·p with λ = 0 would still turn an infinite p into NaN.
const (
	Maximize    UpdateFlags = 1 << iota // use −g
	WeightDecay                         // SGD: d += λ·p; Adam: g += λ·p (L2)
	Momentum                            // SGD: keep the buffer buf
	FirstStep                           // SGD with Momentum: buf = d (PyTorch's first step)
	Nesterov                            // SGD with Momentum: d += μ·buf instead of d = buf
	Decay                               // AdamW: p = decay·p before the update
	AMSGrad                             // Adam: v = vmax = max(vmax, v)
)

// The entries of an SGD kernel's hyperparameter array, in the parameter's
// dtype.
const (
	SGDLR          = iota // learning rate
	SGDMomentum           // μ
	SGDKeep               // 1 − dampening
	SGDWeightDecay        // λ
	SGDParams             // the array's length
)

// The entries of an Adam kernel's hyperparameter array, in the
// parameter's dtype.
const (
	AdamBeta1         = iota // β1
	AdamBeta2                // β2
	AdamOneMinusBeta1        // 1 − β1
	AdamOneMinusBeta2        // 1 − β2
	AdamEps                  // eps
	AdamWeightDecay          // λ (Adam's L2)
	AdamDecay                // 1 − lr·λ (AdamW)
	AdamStepSize             // lr / (1 − β1^t)
	AdamBC2Sqrt              // √(1 − β2^t)
	AdamParams               // the array's length
)
