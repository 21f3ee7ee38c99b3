#!/usr/bin/env python3
"""PyTorch's Mish, F.mish, and its first two derivatives by autograd, for
TestMishAgainstPyTorch. Reads x values (one per line, hex floats) from
standard input and writes one JSON object to standard output:

    {"torch": version,
     "float64": [[f, f', f''], ...], "float32": [[f, f', f''], ...]}

with f' and f'' the gradient and the gradient of the gradient of
sum(F.mish(x)), as gradgradcheck would take them. Non-finite values are
written as the strings "nan", "inf", "-inf". Needs a python3 with torch
(Debian: apt-get install python3-torch); the test runs it as

    python3 ops/activation/testdata/torch_mish.py < xs.txt
"""
import json
import math
import sys

import torch
import torch.nn.functional as F


def derivatives(xs, dtype):
    x = torch.tensor(xs, dtype=dtype, requires_grad=True)
    y = F.mish(x)
    (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x)
    return [[enc(v) for v in row] for row in zip(y.tolist(), d1.tolist(), d2.tolist())]


def enc(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def main():
    xs = [float.fromhex(line) for line in sys.stdin if line.strip()]
    out = {"torch": torch.__version__, "float64": derivatives(xs, torch.float64), "float32": derivatives(xs, torch.float32)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
