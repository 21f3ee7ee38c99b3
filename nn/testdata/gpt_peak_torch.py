#!/usr/bin/env python3
"""PyTorch's peak resident memory on a GPT training step: the model of
gpt_torch.py (nanoGPT's, math attention as torch 1.13 runs it), AdamW and
clip_grad_norm_, float32, uniform random tokens; by default the shapes of
BenchmarkGPTTrainStep (4 blocks, d 256, 8 heads, T 128, batch 16,
vocabulary 256, tied head). The Go side of the comparison is
examples/recompute with the same flags.

    python3 nn/testdata/gpt_peak_torch.py [--threads N] [--blocks 4 --dim 256 --heads 8 --t 128 --batch 16 --vocab 256]

It prints the peak RSS (ru_maxrss) before the first step (model, optimizer
and batch built) and after 1 + steps steps, in MB.
"""
import argparse
import os
import resource
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_torch import GPT, gpt_loss  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads; 0 keeps torch's default")
ap.add_argument("--blocks", type=int, default=4)
ap.add_argument("--dim", type=int, default=256)
ap.add_argument("--heads", type=int, default=8)
ap.add_argument("--t", type=int, default=128)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--vocab", type=int, default=256)
ap.add_argument("--steps", type=int, default=3)
a = ap.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
torch.manual_seed(0)
model = GPT({"vocab": a.vocab, "block_size": a.t, "layers": a.blocks, "heads": a.heads, "dim": a.dim, "tie": True})
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randint(0, a.vocab, (a.batch, a.t)), torch.randint(0, a.vocab, (a.batch, a.t))


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


before = peak_mb()
for _ in range(1 + a.steps):
    opt.zero_grad(set_to_none=True)
    gpt_loss(model, x, y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
print(f"torch {torch.__version__} threads={torch.get_num_threads()}: peak RSS {before:.0f} MB before the first step, {peak_mb():.0f} MB after {1 + a.steps} steps")
