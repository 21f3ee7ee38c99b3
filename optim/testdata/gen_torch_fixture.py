#!/usr/bin/python3
"""Writes torch_optim.json: PyTorch's trajectories for the optimizer tests.

Runs torch.optim.SGD (several settings), Adam and AdamW for a few steps on
fixed parameters and gradients, in float64 and in float32, plus clip_grad_norm_ and the
StepLR/CosineAnnealingLR schedulers, and records every input and output so
that optim's tests compare against PyTorch without running it.

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


def main():
    fixture = {
        "torch_version": torch.__version__,
        "steps": STEPS,
        "cases": [run_case(100 + i, dtype, *c)
                  for dtype in (torch.float64, torch.float32)
                  for i, c in enumerate(CASES)],
        "clip": clip_cases(),
        "schedules": schedule_cases(),
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
