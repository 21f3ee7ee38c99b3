#!/usr/bin/python3
"""Writes torch_optim.json: PyTorch's trajectories for the optimizer tests.

Runs torch.optim.SGD (several settings), Adam and AdamW for a few steps on
fixed parameters and gradients, in float64 and in float32, plus clip_grad_norm_ and the
StepLR/CosineAnnealingLR schedulers, and records every input and output so
that optim's tests compare against PyTorch without running it.

The group cases run SGD, Adam and AdamW with parameter groups of their own
lr, weight decay, betas, momentum etc. under a LambdaLR schedule, with some
gradients None; the nanogpt case is nanoGPT's optimizer step: AdamW with
configure_optimizers' two groups (weight decay on the parameters of two or
more dimensions), betas (0.9, 0.95), every group's lr set to a warmup +
cosine rate each iteration, and clip_grad_norm_ at 1.0 before the step.

    /usr/bin/python3 optim/testdata/gen_torch_fixture.py   (from the repo root)
"""

import json
import math
import os
import tempfile

import torch

torch.set_default_dtype(torch.float64)
STEPS = 6
SHAPES = {"fc.weight": (3, 4), "fc.bias": (5,)}


def make_inputs(seed, dtype):
    gen = torch.Generator().manual_seed(seed)
    params = {n: torch.randn(s, generator=gen).to(dtype).tolist() for n, s in SHAPES.items()}
    grads = []
    for step in range(STEPS):
        g = {}
        for n, s in SHAPES.items():
            # Magnitudes from 1e-3 to 1e2 so that eps and the bias
            # corrections matter; an exact zero exercises 0/(0+eps).
            t = torch.randn(s, generator=gen) * 10.0 ** (step % 6 - 3)
            t.view(-1)[0] = 0.0
            g[n] = t.to(dtype).tolist()
        grads.append(g)
    return params, grads


CASES = [
    ("sgd", torch.optim.SGD, dict(lr=0.1)),
    ("sgd_momentum", torch.optim.SGD, dict(lr=0.05, momentum=0.9)),
    ("sgd_ema", torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.9)),
    ("sgd_nesterov_wd", torch.optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01)),
    ("sgd_damp_wd_maximize", torch.optim.SGD, dict(lr=0.02, momentum=0.7, dampening=0.3, weight_decay=0.05, maximize=True)),
    ("adam", torch.optim.Adam, dict(lr=1e-2)),
    ("adam_wd", torch.optim.Adam, dict(lr=3e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("adam_amsgrad_maximize", torch.optim.Adam, dict(lr=1e-2, amsgrad=True, maximize=True, weight_decay=0.01)),
    ("adamw", torch.optim.AdamW, dict(lr=1e-2)),
    ("adamw_wd_amsgrad", torch.optim.AdamW, dict(lr=3e-2, betas=(0.85, 0.95), eps=1e-5, weight_decay=0.5, amsgrad=True)),
]

# The learning rate is changed before these steps (0-based), to pin down
# what a schedule changes: PyTorch's buffers and moments exclude lr.
LR_CHANGES = {3: 0.5, 5: 2.0}


def run_case(seed, dtype, name, cls, kwargs):
    params_in, grads = make_inputs(seed, dtype)
    params = [torch.tensor(params_in[n], dtype=dtype) for n in SHAPES]
    opt = cls(params, **kwargs)
    lrs, after = [], []
    for step in range(STEPS):
        if step in LR_CHANGES:
            for group in opt.param_groups:
                group["lr"] = kwargs["lr"] * LR_CHANGES[step]
        lrs.append(opt.param_groups[0]["lr"])
        for p, n in zip(params, SHAPES):
            p.grad = torch.tensor(grads[step][n], dtype=dtype)
        opt.step()
        after.append({n: p.tolist() for p, n in zip(params, SHAPES)})
    state = {}
    for p, n in zip(params, SHAPES):
        for key, v in opt.state[p].items():
            if v is None:
                continue
            state[n + "." + key] = v.tolist() if v.dim() > 0 else [v.item()]
    options = {k: v for k, v in kwargs.items()}
    if "betas" in options:
        options["betas"] = list(options["betas"])
    return {
        "name": name,
        "dtype": str(dtype).replace("torch.", ""),
        "optimizer": cls.__name__,
        "options": options,
        "shapes": {n: list(s) for n, s in SHAPES.items()},
        "params": params_in,
        "grads": grads,
        "lrs": lrs,
        "after": after,
        "state": state,
    }


def clip_cases():
    out = []
    gen = torch.Generator().manual_seed(7)
    for max_norm in (0.5, 3.0, 1e6):
        grads = [torch.randn(s, generator=gen) for s in ((4, 3), (7,), (2, 2, 2))]
        before = [g.tolist() for g in grads]
        params = [torch.zeros_like(g, requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
        out.append({
            "max_norm": max_norm,
            "grads": before,
            "shapes": [list(g.shape) for g in grads],
            "norm": norm.item(),
            "clipped": [p.grad.tolist() for p in params],
        })
    return out


def schedule_cases():
    def lrs(make, steps):
        p = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1)
        sched = make(opt)
        out = []
        for _ in range(steps):
            out.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        return out

    return [
        {"kind": "steplr", "lr": 0.1, "step_size": 3, "gamma": 0.5,
         "lrs": lrs(lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5), 12)},
        {"kind": "cosine", "lr": 0.1, "total": 10, "min_lr": 0.001,
         "lrs": lrs(lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 10, 0.001), 11)},
    ]


GROUP_SHAPES = {"fc.weight": (3, 4), "fc.bias": (5,), "ln.weight": (4,), "emb.weight": (6, 2)}
# (step, parameter) pairs whose gradient is None at that step.
NO_GRAD = {(2, "ln.weight"), (4, "fc.bias"), (4, "emb.weight")}
WARMUP, TOTAL = 2, 8


def warmup_cosine(step):
    """LambdaLR's multiplier: a cosine from 1 to 0 over TOTAL steps, its first
    WARMUP steps scaled by (step + 1)/WARMUP (optim.Warmup(optim.Cosine(lr,
    TOTAL, 0), WARMUP) divided by lr)."""
    f = (1 + math.cos(math.pi * min(step, TOTAL) / TOTAL)) / 2
    if step < WARMUP:
        f *= (step + 1) / WARMUP
    return f


GROUP_CASES = [
    ("sgd_groups", torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01), [
        dict(params=["fc.weight", "emb.weight"]),
        dict(params=["fc.bias"], lr=0.1, momentum=0.5, dampening=0.0, nesterov=True, weight_decay=0.0),
        dict(params=["ln.weight"], lr=0.025, momentum=0.0, maximize=True),
    ]),
    ("adamw_groups", torch.optim.AdamW, dict(lr=1e-2, weight_decay=0.1), [
        dict(params=["fc.weight", "emb.weight"]),
        dict(params=["fc.bias", "ln.weight"], lr=3e-2, weight_decay=0.0, betas=(0.8, 0.95), eps=1e-6, amsgrad=True),
    ]),
    ("adam_groups", torch.optim.Adam, dict(lr=1e-2, weight_decay=0.01, betas=(0.85, 0.99)), [
        dict(params=["fc.weight", "emb.weight"], maximize=True),
        dict(params=["fc.bias", "ln.weight"], lr=5e-3, weight_decay=0.0, betas=(0.9, 0.999)),
    ]),
]


def jsonable(options):
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}


def random_grads(gen, shapes, scale, dtype, step, no_grad):
    g = {}
    for n, s in shapes.items():
        t = (torch.randn(s, generator=gen) * scale).to(dtype)
        g[n] = None if (step, n) in no_grad else t.tolist()
    return g


def run_group_case(seed, dtype, name, cls, defaults, groups):
    gen = torch.Generator().manual_seed(seed)
    params_in = {n: torch.randn(s, generator=gen).to(dtype).tolist() for n, s in GROUP_SHAPES.items()}
    grads = [random_grads(gen, GROUP_SHAPES, 10.0 ** (step % 3 - 2), dtype, step, NO_GRAD) for step in range(STEPS)]
    params = {n: torch.tensor(params_in[n], dtype=dtype) for n in GROUP_SHAPES}
    torch_groups = [dict(g, params=[params[n] for n in g["params"]]) for g in groups]
    opt = cls(torch_groups, **defaults)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine)
    lrs, after = [], []
    for step in range(STEPS):
        lrs.append([g["lr"] for g in opt.param_groups])
        for n, p in params.items():
            g = grads[step][n]
            p.grad = None if g is None else torch.tensor(g, dtype=dtype)
        opt.step()
        sched.step()
        after.append({n: p.tolist() for n, p in params.items()})
    return {
        "name": name,
        "dtype": str(dtype).replace("torch.", ""),
        "optimizer": cls.__name__,
        "defaults": jsonable(defaults),
        "groups": [jsonable(g) for g in groups],
        "warmup": WARMUP,
        "total": TOTAL,
        "shapes": {n: list(s) for n, s in GROUP_SHAPES.items()},
        "params": params_in,
        "grads": grads,
        "lrs": lrs,
        "after": after,
        "state": state_of(opt, params),
    }


def state_of(opt, params):
    state = {}
    for n, p in params.items():
        for key, v in opt.state[p].items():
            if v is None:
                continue
            state[n + "." + key] = v.tolist() if v.dim() > 0 else [v.item()]
    return state


# A GPT of nanoGPT's names and shapes (vocab 7, block 3, one layer, width 4,
# bias=True); lm_head.weight is tied to wte, so named_parameters lists it once.
NANO_SHAPES = {
    "transformer.wte.weight": (7, 4), "transformer.wpe.weight": (3, 4),
    "transformer.h.0.ln_1.weight": (4,), "transformer.h.0.ln_1.bias": (4,),
    "transformer.h.0.attn.c_attn.weight": (12, 4), "transformer.h.0.attn.c_attn.bias": (12,),
    "transformer.h.0.attn.c_proj.weight": (4, 4), "transformer.h.0.attn.c_proj.bias": (4,),
    "transformer.h.0.ln_2.weight": (4,), "transformer.h.0.ln_2.bias": (4,),
    "transformer.h.0.mlp.c_fc.weight": (16, 4), "transformer.h.0.mlp.c_fc.bias": (16,),
    "transformer.h.0.mlp.c_proj.weight": (4, 16), "transformer.h.0.mlp.c_proj.bias": (4,),
    "transformer.ln_f.weight": (4,), "transformer.ln_f.bias": (4,),
}
NANO_LR, NANO_MIN_LR, NANO_WD, NANO_WARMUP, NANO_DECAY = 6e-4, 6e-5, 0.1, 2, 6


def nanogpt_lr(it):
    """train.py's get_lr: linear warmup, cosine decay to min_lr."""
    if it < NANO_WARMUP:
        return NANO_LR * (it + 1) / (NANO_WARMUP + 1)
    if it > NANO_DECAY:
        return NANO_MIN_LR
    ratio = (it - NANO_WARMUP) / (NANO_DECAY - NANO_WARMUP)
    return NANO_MIN_LR + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (NANO_LR - NANO_MIN_LR)


def run_nanogpt_case(seed, dtype):
    gen = torch.Generator().manual_seed(seed)
    params_in = {n: (0.02 * torch.randn(s, generator=gen)).to(dtype).tolist() for n, s in NANO_SHAPES.items()}
    # Gradient norms from about 0.2 to 20, so that clipping at 1.0 acts on some steps only.
    grads = [random_grads(gen, NANO_SHAPES, 10.0 ** (step % 3 - 2) * 1.5, dtype, step, set()) for step in range(STEPS + 2)]
    params = {n: torch.tensor(params_in[n], dtype=dtype) for n in NANO_SHAPES}
    # configure_optimizers' rule: decay the parameters of two or more dimensions.
    decay = [n for n, p in params.items() if p.dim() >= 2]
    nodecay = [n for n, p in params.items() if p.dim() < 2]
    opt = torch.optim.AdamW([
        {"params": [params[n] for n in decay], "weight_decay": NANO_WD},
        {"params": [params[n] for n in nodecay], "weight_decay": 0.0},
    ], lr=NANO_LR, betas=(0.9, 0.95))
    lrs, norms, after = [], [], []
    for it in range(len(grads)):
        lr = nanogpt_lr(it)
        for group in opt.param_groups:
            group["lr"] = lr
        lrs.append(lr)
        for n, p in params.items():
            p.grad = torch.tensor(grads[it][n], dtype=dtype)
        norms.append(torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0).item())
        opt.step()
        after.append({n: p.tolist() for n, p in params.items()})
    return {
        "dtype": str(dtype).replace("torch.", ""),
        "lr": NANO_LR,
        "weight_decay": NANO_WD,
        "decay": decay,
        "nodecay": nodecay,
        "names": list(NANO_SHAPES),
        "shapes": {n: list(s) for n, s in NANO_SHAPES.items()},
        "params": params_in,
        "grads": grads,
        "lrs": lrs,
        "norms": norms,
        "after": after,
        "state": state_of(opt, params),
    }


def main():
    fixture = {
        "torch_version": torch.__version__,
        "steps": STEPS,
        "cases": [run_case(100 + i, dtype, *c)
                  for dtype in (torch.float64, torch.float32)
                  for i, c in enumerate(CASES)],
        "clip": clip_cases(),
        "schedules": schedule_cases(),
        "group_cases": [run_group_case(200 + i, dtype, *c)
                        for dtype in (torch.float64, torch.float32)
                        for i, c in enumerate(GROUP_CASES)],
        "nanogpt": [run_nanogpt_case(300, dtype) for dtype in (torch.float64, torch.float32)],
    }
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "torch_optim.json")
    fd, tmp = tempfile.mkstemp(dir=here, prefix=".torch_optim.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    print("wrote", path)


if __name__ == "__main__":
    main()
