#!/usr/bin/env python3
"""PyTorch side of examples/benchmark: the same workloads, timed the same
way (warm-up runs, then the median of -reps runs), printed as JSON on stdout.

    /usr/bin/python3 examples/benchmark/bench_torch.py --reps 7 --threads 2 [--scaling]

Workloads (times in seconds per run):
  gelu/<form>/<dtype>    forward + backward of GELU on 4M elements
  ffn/<tokens>x<d>x<dff>/<dtype>
                         one training step of the pre-LN feed-forward block:
                         LayerNorm → Linear(d, dff) → GELU → Linear(dff, d) + residual,
                         MSE loss, SGD with momentum 0.9
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn


def timed(fn, reps, warmup=2):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def gelu_workload(approximate, dtype, n=4 << 20):
    g = torch.Generator().manual_seed(1)
    x = (3 * torch.randn(n, generator=g, dtype=dtype)).requires_grad_()
    up = torch.randn(n, generator=g, dtype=dtype)

    def step():
        x.grad = None
        y = nn.functional.gelu(x, approximate=approximate)
        y.backward(up)

    return step


class FeedForward(nn.Module):
    def __init__(self, d, dff):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, dff)
        self.fc2 = nn.Linear(dff, d)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


def ffn_workload(tokens, d, dff, dtype):
    torch.manual_seed(1)
    model = FeedForward(d, dff).to(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(tokens, d, dtype=dtype)
    y = torch.randn(tokens, d, dtype=dtype)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scaling", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "times": {}}
    t = out["times"]
    for dtype, dn in ((torch.float32, "float32"), (torch.float64, "float64")):
        for form, approx in (("exact", "none"), ("tanh", "tanh")):
            t[f"gelu/{form}/{dn}"] = timed(gelu_workload(approx, dtype), args.reps)
    shapes = [(512, 256, 1024), (256, 768, 3072)]
    if args.scaling:
        shapes += [(n, 768, 3072) for n in (64, 128, 512, 1024)]
        shapes += [(256, d, 4 * d) for d in (128, 256, 512, 1024)]
    for tokens, d, dff in shapes:
        for dtype, dn in ((torch.float32, "float32"), (torch.float64, "float64")):
            if dtype == torch.float64 and (tokens, d, dff) not in [(512, 256, 1024), (256, 768, 3072)]:
                continue
            t[f"ffn/{tokens}x{d}x{dff}/{dn}"] = timed(ffn_workload(tokens, d, dff, dtype), args.reps)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
