"""A GPT with nanoGPT's state_dict layout, written for this project's tests:
the layout, not the code, is the contract. It stands in for nanoGPT's
model.py (github.com/karpathy/nanoGPT) so that nn/nanogpt_test.go can run
the lines a nanoGPT user writes against a module that behaves as nanoGPT's
GPT does where the Go side meets it:

  - the names: transformer.{wte, wpe, h.<i>.{ln_1, attn.{c_attn, c_proj},
    ln_2, mlp.{c_fc, c_proj}}, ln_f}.{weight, bias}, lm_head.weight;
  - bias=False drops the bias of every Linear and of every LayerNorm;
  - the head is tied to wte, so state_dict() lists lm_head.weight too;
  - when torch has no F.scaled_dot_product_attention (torch < 2, as
    Debian's 1.13), every attention layer registers its causal mask as a
    buffer, attn.bias = tril(ones(bs, bs)).view(1, 1, bs, bs), which
    state_dict() includes and a strict load_state_dict requires; on
    torch >= 2 there is no such buffer. The environment variable
    NANOGPT_TORCH2 set to 1 or 0 chooses the torch >= 2 or the torch 1.x
    layout whatever torch is installed, so both are tested here;
  - nanoGPT's initialization (N(0, 0.02), c_proj.weight N(0, 0.02/sqrt(2
    n_layer)), zero biases, LayerNorm weight 1) and its forward(idx,
    targets) -> (logits, loss) with ignore_index=-1.
"""
import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

def has_sdpa():
    """Whether this torch has fused attention (F.scaled_dot_product_attention,
    torch >= 2), nanoGPT's condition for not registering the mask buffers;
    NANOGPT_TORCH2=1 or 0 overrides it."""
    forced = os.environ.get("NANOGPT_TORCH2")
    if forced in ("0", "1"):
        return forced == "1"
    return hasattr(F, "scaled_dot_product_attention")


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class Norm(nn.Module):
    """LayerNorm whose bias can be left out (torch 1.13's nn.LayerNorm
    cannot); its parameters are still called weight and bias."""

    def __init__(self, dim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, (self.weight.numel(),), self.weight, self.bias, 1e-5)


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias)
        self.attn_dropout = nn.Dropout(c.dropout)
        self.resid_dropout = nn.Dropout(c.dropout)
        self.heads, self.dim = c.n_head, c.n_embd
        self.fused = has_sdpa()
        if not self.fused:
            mask = torch.tril(torch.ones(c.block_size, c.block_size))
            self.register_buffer("bias", mask.view(1, 1, c.block_size, c.block_size))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.dim, dim=2)
        q, k, v = (t.reshape(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        if self.fused:  # the emulated torch >= 2: the same causal attention, mask made here
            causal = torch.ones(T, T, dtype=torch.bool).tril()
        else:
            causal = self.bias[:, :, :T, :T] != 0
        scores = scores.masked_fill(~causal, float("-inf"))
        y = self.attn_dropout(F.softmax(scores, dim=-1)) @ v
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = Norm(c.n_embd, c.bias)
        self.attn = SelfAttention(c)
        self.ln_2 = Norm(c.n_embd, c.bias)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c.vocab_size, c.n_embd),
            wpe=nn.Embedding(c.block_size, c.n_embd),
            drop=nn.Dropout(c.dropout),
            h=nn.ModuleList(Block(c) for _ in range(c.n_layer)),
            ln_f=Norm(c.n_embd, c.bias),
        ))
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c.n_layer))
            elif name.endswith(".bias"):
                nn.init.zeros_(p)
            elif ".ln_" in name or name.startswith("transformer.ln_f"):
                nn.init.ones_(p)
            else:  # Linear and Embedding weights
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx, targets=None):
        b, t = idx.shape
        pos = torch.arange(t, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss
