#!/usr/bin/env python3
"""PyTorch timing of BenchmarkGPTTrainStep's step (nn/transformer_bench_test.go):
the same shapes (4 blocks, d=256, 8 heads, T=128, batch 16, vocabulary 256,
tied head), AdamW and clip_grad_norm_, float32.

    python3 nn/testdata/gpt_bench_torch.py            # as installed: nothing set
    python3 nn/testdata/gpt_bench_torch.py --sweep    # as installed and every thread pair, best named
    python3 nn/testdata/gpt_bench_torch.py --threads 2 --blas-threads 1

With no option PyTorch runs as installed. --threads sets the intra-op threads
(torch.set_num_threads); --blas-threads, chosen independently, the BLAS's
(OPENBLAS_NUM_THREADS and MKL_NUM_THREADS, set before torch is imported):
Debian's torch runs its matrix products on OpenBLAS's own threads whatever
its intra-op count. --sweep runs as installed and every pair of 1 and 2
threads each, a process per setting with the thread variables removed from
its environment, and names the fastest.
"""
import argparse
import os
import subprocess
import sys
import time

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS")
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, help="intra-op threads; default: as installed")
    ap.add_argument("--blas-threads", type=int, help="the BLAS's threads; default: as installed")
    ap.add_argument("--sweep", action="store_true", help="as installed and every pair of 1 and 2 threads, the fastest named")
    ap.add_argument("--steps", type=int, default=3, help="timed steps after one warm-up step")
    args = ap.parse_args()
    if min(args.threads or 1, args.blas_threads or 1, args.steps) < 1:
        ap.error("want --threads, --blas-threads and --steps >= 1")
    return args


def sweep(steps):
    """Runs this script once per setting, in a clean environment, and names the fastest."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    settings = [("as installed", [])]
    for t in (1, 2):
        for b in (1, 2):
            settings.append((f"{t} intra-op, {b} BLAS", ["--threads", str(t), "--blas-threads", str(b)]))
    results = []
    for name, opts in settings:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--steps", str(steps)] + opts,
                             env=env, check=True, capture_output=True, text=True).stdout.strip()
        seconds = float(out.split("s/step")[0].split()[-1])
        print(f"{name:18s} {out}")
        results.append((seconds, name))
    seconds, name = min(results)
    print(f"best: {name}, {seconds:.3f} s/step, {16 * 128 / seconds:.0f} tokens/s")


def main():
    args = parse_args()
    if args.sweep:
        sweep(args.steps)
        return
    # The BLAS under torch reads these when it loads: set before import.
    for var in BLAS_THREAD_VARS if args.blas_threads else ():
        have = os.environ.setdefault(var, str(args.blas_threads))
        if have != str(args.blas_threads):
            sys.exit(f"gpt_bench_torch.py: {var}={have} in the environment, but --blas-threads {args.blas_threads}")
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpt_torch import GPT, gpt_loss

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = GPT({"vocab": 256, "block_size": 128, "layers": 4, "heads": 8, "dim": 256, "tie": True})
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    x, y = torch.randint(0, 256, (16, 128)), torch.randint(0, 256, (16, 128))

    def step():
        opt.zero_grad()
        gpt_loss(model, x, y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    dt = (time.perf_counter() - start) / args.steps
    blas = {v: os.environ[v] for v in THREAD_VARS if v in os.environ}
    print(f"torch {torch.__version__} intra-op threads={torch.get_num_threads()} env={blas or 'none'}: "
          f"{dt:.3f} s/step, {16 * 128 / dt:.0f} tokens/s")


if __name__ == "__main__":
    main()
