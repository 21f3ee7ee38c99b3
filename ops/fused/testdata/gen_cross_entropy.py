#!/usr/bin/python3
"""Writes cross_entropy_torch.json: PyTorch's F.cross_entropy (mean
reduction) with ignore_index, its value and its gradient with respect to
the logits, for TestCrossEntropyIgnoreIndexMatchesPyTorch.

Each case records the logits (rows × classes), the labels, the
ignore_index, and torch's loss and d loss / d logits, computed in the
case's dtype; the last case ignores every row (torch 1.13 gives NaN).

    /usr/bin/python3 ops/fused/testdata/gen_cross_entropy.py   (from the repo root)
"""

import json
import math
import os

import torch
import torch.nn.functional as F


def case(name, dtype, rows, classes, labels, ignore_index, seed):
    gen = torch.Generator().manual_seed(seed)
    logits = (torch.randn(rows, classes, generator=gen, dtype=torch.float64) * 3).to(dtype)
    z = logits.clone().requires_grad_(True)
    y = torch.tensor(labels, dtype=torch.long)
    loss = F.cross_entropy(z, y, ignore_index=ignore_index)
    loss.backward()
    value = loss.item()
    return {
        "name": name,
        "dtype": str(dtype).removeprefix("torch."),
        "rows": rows,
        "classes": classes,
        "logits": [float(v) for v in logits.reshape(-1).tolist()],
        "labels": labels,
        "ignore_index": ignore_index,
        "loss": None if math.isnan(value) else value,
        "grad": [None if math.isnan(v) else float(v) for v in z.grad.reshape(-1).tolist()],
    }


cases = []
for dtype in (torch.float64, torch.float32):
    cases += [
        case("nanoGPT padding (-1)", dtype, 8, 5, [0, -1, 4, 2, -1, -1, 1, 3], -1, 1),
        case("ignore a class (2)", dtype, 6, 4, [2, 0, 2, 3, 1, 2], 2, 2),
        case("nothing ignored", dtype, 5, 7, [6, 0, 3, 3, 1], -100, 3),
        case("every row ignored", dtype, 3, 4, [-1, -1, -1], -1, 4),
    ]
out = {"torch_version": torch.__version__, "cases": cases}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cross_entropy_torch.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", path)
