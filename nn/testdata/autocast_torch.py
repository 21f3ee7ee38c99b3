#!/usr/bin/env python3
"""PyTorch side of nn/autocast_parity_test.go: the FFN block or the GPT,
initialized from the Go model's weights and trained on the Go test's
batches in float32, in one of three modes (config "mode"):

  none      float32 throughout
  autocast  the forward pass under torch.autocast("cpu", dtype=torch.bfloat16),
            the backward outside it, as PyTorch's documentation does it;
            master weights and optimizer state stay float32
  emulate   what graph.SetAutocast(BFloat16) computes, written out here:
            both operands of every matrix product (the Linears, the LM head,
            attention's Q·Kᵀ and P·V, and the products of their gradients)
            rounded to bfloat16, the sums in float32, every other op and all
            results float32 (autocast also rounds results to bfloat16)

    autocast_torch.py DIR

DIR holds, written by the Go test: config.json ({"model": "ffn" or "gpt",
"mode", "steps", the model's sizes, the optimizer's settings}),
init.safetensors and batches.safetensors (x.<i>, y.<i>). It writes
losses.json: the loss and the gradient norm of every step.
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_torch import GPT  # noqa: E402
from st import load  # noqa: E402


def bf16(t):
    """t rounded to bfloat16 (nearest, ties to even), as float32."""
    return t.to(torch.bfloat16).float()


class BF16MatMul(torch.autograd.Function):
    """a @ b with both operands rounded to bfloat16 and float32 sums; the
    gradients' products likewise (dA = G·Bᵀ, dB = Aᵀ·G)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return bf16(a) @ bf16(b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return bf16(g) @ bf16(b).transpose(-2, -1), bf16(a).transpose(-2, -1) @ bf16(g)


def mm(a, b, emulate):
    return BF16MatMul.apply(a, b) if emulate else a @ b


def linear(x, lin, emulate, weight=None):
    w = lin.weight if weight is None else weight
    y = mm(x, w.t(), emulate)
    return y if lin is None or getattr(lin, "bias", None) is None else y + lin.bias


class FeedForward(nn.Module):
    """nn.FeedForward's pre-LN block, x + fc2(gelu(fc1(ln(x)))), same names."""

    def __init__(self, d, dff):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, dff)
        self.fc2 = nn.Linear(dff, d)
        self.emulate = False

    def forward(self, x):
        if not self.emulate:
            return x + self.fc2(F.gelu(self.fc1(self.ln(x))))
        h = F.gelu(linear(self.ln(x), self.fc1, True))
        return x + linear(h, self.fc2, True)

    def load(self, sd):
        self.load_state_dict(sd, strict=True)


def gpt_emulated(model, idx):
    """gpt_torch.GPT's forward with every product through BF16MatMul."""
    B, T = idx.size()
    tr = model.transformer
    x = tr.wte(idx) + tr.wpe(torch.arange(T))
    for b in tr.h:
        a = b.attn
        C = x.size(-1)
        q, k, v = linear(b.ln_1(x), a.c_attn, True).split(C, dim=2)
        q, k, v = (t.view(B, T, a.heads, C // a.heads).transpose(1, 2) for t in (q, k, v))
        att = mm(q, k.transpose(-2, -1), True) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        y = mm(F.softmax(att, dim=-1), v, True).transpose(1, 2).contiguous().view(B, T, C)
        x = x + linear(y, a.c_proj, True)
        m = b.mlp
        x = x + linear(F.gelu(linear(b.ln_2(x), m.c_fc, True)), m.c_proj, True)
    return linear(tr.ln_f(x), model.lm_head, True).view(B * T, -1)


def main(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    mode = cfg["mode"]
    emulate = mode == "emulate"
    torch.set_num_threads(1)  # one order of summation, run to run
    sd = {k: v.float() for k, v in load(os.path.join(d, "init.safetensors")).items()}
    if cfg["model"] == "ffn":
        model = FeedForward(cfg["dim"], cfg["hidden"])
        model.emulate = emulate
        opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"])

        def loss_fn(x, y):
            return F.mse_loss(model(x), y)
    else:
        model = GPT(cfg)
        opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=cfg["weight_decay"])
        forward = (lambda idx: gpt_emulated(model, idx)) if emulate else model

        def loss_fn(x, y):
            return F.cross_entropy(forward(x.long()), y.long().view(-1))
    model.load(sd)
    batches = {k: v.float() for k, v in load(os.path.join(d, "batches.safetensors")).items()}
    losses, norms = [], []
    for i in range(cfg["steps"]):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "autocast"):
            loss = loss_fn(batches[f"x.{i}"], batches[f"y.{i}"])
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))))
        opt.step()
        losses.append(loss.item())
    json.dump({"losses": losses, "norms": norms, "torch": torch.__version__}, open(os.path.join(d, "losses.json"), "w"))


if __name__ == "__main__":
    main(sys.argv[1])
