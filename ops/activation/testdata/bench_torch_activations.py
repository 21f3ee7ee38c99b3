#!/usr/bin/env python3
"""PyTorch CPU throughput of the activation workloads of
ops/activation/kernels_bench_test.go, in Melem/s, for a side-by-side
comparison (examples/benchmark makes the fair one: every thread setting of
both sides, the best of each named):

    /usr/bin/python3 ops/activation/testdata/bench_torch_activations.py             # as installed
    /usr/bin/python3 ops/activation/testdata/bench_torch_activations.py --threads 2
    go test ./ops/activation -run '^$' -bench 'GELUForwardBackward' -benchtime 20x

Workloads: 4M elements x ~ N(0, 3^2), upstream gradient g ~ N(0, 1);
"forward" is y = gelu(x), "backward" is gelu_backward(g, x) (what autograd
calls), "fwd+bwd" is one of each, so its Melem/s is 4M / (t_fwd + t_bwd).
Each figure is the best of --repeats timings of --iters calls, with
PyTorch as installed (nothing set) or on --threads intra-op threads.
"""
import argparse
import time

import torch


def best_seconds(fn, iters, repeats):
    fn()  # warm up (allocations, thread pool)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4 << 20)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: as installed)")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(1)
    x64 = 3 * torch.randn(args.n, generator=gen, dtype=torch.float64)
    g64 = torch.randn(args.n, generator=gen, dtype=torch.float64)
    cap = [l.strip() for l in torch.__config__.show().splitlines() if "CPU capability" in l]
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads, {cap[0] if cap else ''}")
    for dtype in (torch.float32, torch.float64):
        x, g = x64.to(dtype), g64.to(dtype)
        y, dx = torch.empty_like(x), torch.empty_like(x)
        for approx, name in (("none", "gelu"), ("tanh", "gelu_tanh")):
            # The out= variants write into preallocated tensors, as the Go
            # kernels do.
            fwd = best_seconds(lambda: torch._C._nn.gelu(x, approximate=approx, out=y),
                               args.iters, args.repeats)
            bwd = best_seconds(lambda: torch.ops.aten.gelu_backward.grad_input(g, x, approximate=approx, grad_input=dx),
                               args.iters, args.repeats)
            n = args.n / 1e6
            print(f"{name:10s} {str(dtype).replace('torch.', ''):8s} forward {n / fwd:8.1f}  "
                  f"backward {n / bwd:8.1f}  fwd+bwd {n / (fwd + bwd):8.1f} Melem/s")


if __name__ == "__main__":
    main()
