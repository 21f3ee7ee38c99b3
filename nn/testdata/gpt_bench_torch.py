#!/usr/bin/env python3
"""PyTorch timing of BenchmarkGPTTrainStep's step (nn/transformer_bench_test.go):
the same shapes (4 blocks, d=256, 8 heads, T=128, batch 16, vocabulary 256,
tied head), AdamW and clip_grad_norm_, float32.

    python3 nn/testdata/gpt_bench_torch.py [threads]
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_torch import GPT, gpt_loss  # noqa: E402

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
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
n, start = 3, time.time()
for _ in range(n):
    step()
dt = (time.time() - start) / n
print(f"torch {torch.__version__} threads={torch.get_num_threads()}: {dt:.3f} s/step, {16 * 128 / dt:.0f} tokens/s")
