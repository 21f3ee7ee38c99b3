#!/usr/bin/env python3
"""The PyTorch side of nn/transformer_parity_test.go for nn.GPT: nanoGPT's
model.py architecture, written out here with the same state_dict names
(transformer.wte, transformer.wpe, transformer.h.N.{ln_1, attn.c_attn,
attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, transformer.ln_f, lm_head).

    gpt_torch.py DIR

DIR holds, written by the Go test: config.json, init.safetensors (the Go
model's initial parameters) and batches.safetensors (x.<i>, y.<i>). It
writes losses.json (per-step training losses under AdamW with gradient
clipping, float64), torch_init.safetensors (a model initialized here by
torch.manual_seed(0)) and torch_forward.json (its logits on x.0).
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st import load, save  # noqa: E402


class SelfAttention(nn.Module):
    def __init__(self, d, heads, causal, bias=True):
        super().__init__()
        self.c_attn = nn.Linear(d, 3 * d, bias=bias)
        self.c_proj = nn.Linear(d, d, bias=bias)
        self.heads, self.causal = heads, causal

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if self.causal:
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
            att = att.masked_fill(~mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


GATES = {"": None, "glu": torch.sigmoid, "geglu": F.gelu, "swiglu": F.silu, "reglu": F.relu}


class MLP(nn.Module):
    """c_proj(gelu(c_fc(x))), or with a gate c_proj(gate(c_fc(x)) * c_up(x))."""

    def __init__(self, d, hidden, gate="", bias=True):
        super().__init__()
        self.c_fc = nn.Linear(d, hidden, bias=bias)
        self.gate = GATES[gate]
        if self.gate is not None:
            self.c_up = nn.Linear(d, hidden, bias=bias)
        self.c_proj = nn.Linear(hidden, d, bias=bias)

    def forward(self, x):
        if self.gate is None:
            return self.c_proj(F.gelu(self.c_fc(x)))
        return self.c_proj(self.gate(self.c_fc(x)) * self.c_up(x))


class Block(nn.Module):
    def __init__(self, d, heads, causal, hidden=None, gate=""):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, heads, causal)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = MLP(d, hidden or 4 * d, gate)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["dim"]
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab"], d),
            wpe=nn.Embedding(c["block_size"], d),
            h=nn.ModuleList([Block(d, c["heads"], True, c.get("hidden"), c.get("gate", "")) for _ in range(c["layers"])]),
            ln_f=nn.LayerNorm(d),
        ))
        self.lm_head = nn.Linear(d, c["vocab"], bias=False)
        self.tied = c["tie"]
        if self.tied:
            self.transformer.wte.weight = self.lm_head.weight
        # nanoGPT's init
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                torch.nn.init.zeros_(p)
            elif "ln_" in name:
                torch.nn.init.ones_(p)
            elif name.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c["layers"]))
            else:
                torch.nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx):
        B, T = idx.size()
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T))
        for b in self.transformer.h:
            x = b(x)
        return self.lm_head(self.transformer.ln_f(x)).view(B * T, -1)

    def state(self):
        sd = self.state_dict()
        if self.tied:
            del sd["lm_head.weight"]  # the same tensor as transformer.wte.weight
        return sd

    def load(self, sd):
        if self.tied:
            sd = dict(sd, **{"lm_head.weight": sd["transformer.wte.weight"]})
        self.load_state_dict(sd, strict=True)


def train(model, cfg, batches, loss_fn):
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=cfg["weight_decay"])
    losses, norms = [], []
    for i in range(cfg["steps"]):
        opt.zero_grad()
        loss = loss_fn(model, batches[f"x.{i}"], batches[f"y.{i}"])
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])))
        opt.step()
        losses.append(loss.item())
    return losses, norms


def run(d, make, loss_fn, forward_input):
    cfg = json.load(open(os.path.join(d, "config.json")))
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    model = make(cfg)
    model.load(load(os.path.join(d, "init.safetensors")))
    batches = load(os.path.join(d, "batches.safetensors"))
    losses, norms = train(model, cfg, batches, loss_fn)
    json.dump({"losses": losses, "norms": norms, "torch": torch.__version__}, open(os.path.join(d, "losses.json"), "w"))

    torch.manual_seed(0)
    fresh = make(cfg)
    save(os.path.join(d, "torch_init.safetensors"), fresh.state())
    with torch.no_grad():
        out = fresh(forward_input(batches["x.0"])).reshape(-1).tolist()
    json.dump({"output": out}, open(os.path.join(d, "torch_forward.json"), "w"))


def gpt_loss(model, x, y):
    return F.cross_entropy(model(x.long()), y.long().view(-1))


if __name__ == "__main__":
    run(sys.argv[1], GPT, gpt_loss, lambda x: x.long())
