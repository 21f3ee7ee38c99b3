#!/usr/bin/env python3
"""PyTorch's exact GELU in float32 in the negative tail and at ±Inf,
against a 50-digit mpmath reference (activation.GELU matches the reference to
1 ulp in float32 everywhere: see accuracy_test.go). Run with a python3 that
has torch and mpmath (Debian: apt-get install python3-torch python3-mpmath):

    /usr/bin/python3 ops/testdata/torch_gelu_tail.py
"""
import mpmath as mp
import torch

mp.mp.dps = 50
xs = [-3.0, -4.0, -5.0, -5.5, -6.0, -7.0, -8.0, -10.0]
y = torch.nn.functional.gelu(torch.tensor(xs, dtype=torch.float32))
print(f"torch {torch.__version__}, float32, F.gelu (exact)")
print(f"{'x':>6} {'torch':>14} {'exact':>14} {'rel. error':>10}")
for x, got in zip(xs, y.tolist()):
    ref = float(mp.mpf(x) * mp.erfc(-mp.mpf(x) / mp.sqrt(2)) / 2)
    print(f"{x:6.1f} {got:14.6e} {ref:14.6e} {(got - ref) / ref:10.3f}")
xi = torch.tensor([float("inf"), float("-inf")], requires_grad=True)
yi = torch.nn.functional.gelu(xi)
yi.sum().backward()
print("GELU(+inf), GELU(-inf) =", yi.tolist(), "; gradients:", xi.grad.tolist())
