#!/usr/bin/env python3
"""PyTorch's side of BenchmarkGemmBF16 (ops/gemm/bf16_bench_test.go): the
same matrix products, C = op(A)·op(B) with float32 A and B, timed in
float32 (torch.mm) and under torch.autocast("cpu", dtype=torch.bfloat16)
(the operands cast to bfloat16 on every call, as mixed-precision training
casts them, the product in bfloat16), and with operands already in
bfloat16 (bf16in). Prints one JSON line: the settings PyTorch ran with and,
per product, GFLOP/s = 2·m·n·k / time (median of --reps timed runs of at
least 20 ms each, after a warm-up).

    bf16_matmul_torch.py [--threads N] [--blas-threads N] [--reps 5] [--shapes name,...]

With no thread option PyTorch runs as installed: nothing is set.
--threads sets the intra-op threads (torch.set_num_threads); --blas-threads,
chosen independently, the BLAS's (OPENBLAS_NUM_THREADS and MKL_NUM_THREADS,
set before torch is imported).
"""
import argparse
import json
import os
import statistics
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int)
ap.add_argument("--blas-threads", type=int)
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--shapes", help="comma-separated product names (default: all)")
ARGS = ap.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if ARGS.blas_threads else ():
    have = os.environ.setdefault(var, str(ARGS.blas_threads))
    if have != str(ARGS.blas_threads):
        sys.exit(f"{var}={have} in the environment, but --blas-threads {ARGS.blas_threads}")

import torch  # noqa: E402


def shapes():
    """bf16BenchShapes: (name, tA, tB, m, n, k), in the Go benchmark's order."""
    s = []

    def layer(prefix, rows, inp, out):
        s.extend([(f"{prefix}/fwd_XWt_{rows}x{out}x{inp}", False, True, rows, out, inp),
                  (f"{prefix}/bwd_dYW_{rows}x{inp}x{out}", False, False, rows, inp, out),
                  (f"{prefix}/bwd_dYtX_{out}x{inp}x{rows}", True, False, out, inp, rows)])
    layer("ffn512", 512, 256, 1024)
    layer("ffn512", 512, 1024, 256)
    layer("ffn256", 256, 768, 3072)
    layer("ffn256", 256, 3072, 768)
    layer("mnist", 128, 784, 128)
    layer("mnist", 128, 128, 128)
    layer("mnist", 128, 128, 10)
    s.append(("peak/square_1024", False, False, 1024, 1024, 1024))

    def gpt(prefix, tokens, t, d, heads):
        def glayer(name, inp, out):
            s.extend([(f"{prefix}/{name}_fwd_{tokens}x{out}x{inp}", False, True, tokens, out, inp),
                      (f"{prefix}/{name}_dX_{tokens}x{inp}x{out}", False, False, tokens, inp, out),
                      (f"{prefix}/{name}_dW_{out}x{inp}x{tokens}", True, False, out, inp, tokens)])
        glayer("qkv", d, 3 * d)
        glayer("proj", d, d)
        glayer("fc", d, 4 * d)
        glayer("fcproj", 4 * d, d)
        glayer("head", d, 65)
        hd = d // heads
        s.append((f"{prefix}/attn_QKt_{t}x{t}x{hd}", False, True, t, t, hd))
        s.append((f"{prefix}/attn_PV_{t}x{hd}x{t}", False, False, t, hd, t))
    gpt("gpt_L4d256T128B16", 16 * 128, 128, 256, 8)
    gpt("gpt_d256T256B16", 16 * 256, 256, 256, 8)
    return s


def rate(run, flop):
    run()
    n = 1
    while True:  # runs per timed rep: at least 20 ms
        t0 = time.perf_counter()
        for _ in range(n):
            run()
        if time.perf_counter() - t0 >= 0.02:
            break
        n *= 2
    ts = []
    for _ in range(ARGS.reps):
        t0 = time.perf_counter()
        for _ in range(n):
            run()
        ts.append((time.perf_counter() - t0) / n)
    return flop / statistics.median(ts) / 1e9


def main():
    if ARGS.threads:
        torch.set_num_threads(ARGS.threads)
    want = set(ARGS.shapes.split(",")) if ARGS.shapes else None
    g = torch.Generator().manual_seed(1)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(),
           "blas_threads_env": os.environ.get("OPENBLAS_NUM_THREADS", "as installed"), "gflops": {}}
    for name, ta, tb, m, n, k in shapes():
        if want is not None and name not in want:
            continue
        a = torch.randn(*((k, m) if ta else (m, k)), generator=g)
        b = torch.randn(*((n, k) if tb else (k, n)), generator=g)
        opa, opb = (a.t() if ta else a), (b.t() if tb else b)
        a16, b16 = a.bfloat16(), b.bfloat16()
        opa16, opb16 = (a16.t() if ta else a16), (b16.t() if tb else b16)
        flop = 2.0 * m * n * k

        def autocast_mm():
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return torch.mm(opa, opb)
        out["gflops"][name] = {"f32": rate(lambda: torch.mm(opa, opb), flop), "bf16": rate(autocast_mm, flop),
                               "bf16in": rate(lambda: torch.mm(opa16, opb16), flop)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
