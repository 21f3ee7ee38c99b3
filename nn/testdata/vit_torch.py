#!/usr/bin/env python3
"""The PyTorch side of nn/transformer_parity_test.go for nn.ViT: a Vision
Transformer for square one-channel images with nn.ViT's state_dict names
(patch_embed, cls_token, pos_embed, blocks.N.{ln_1, attn.c_attn,
attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, norm, head).

    vit_torch.py DIR

Inputs and outputs as gpt_torch.py; x.<i> are images (batch × side²) and
y.<i> class labels.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_torch import Block, run  # noqa: E402


class ViT(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, p = c["dim"], c["patch"]
        self.side = c["image"] // p
        self.p = p
        self.patch_embed = nn.Linear(p * p, d)
        self.cls_token = nn.Parameter(torch.zeros(d))
        self.pos_embed = nn.Parameter(torch.randn(self.side * self.side + 1, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, c["heads"], False) for _ in range(c["layers"])])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, c["classes"])

    def forward(self, images):
        B, s, p = images.shape[0], self.side, self.p
        x = images.reshape(B, s, p, s, p).permute(0, 1, 3, 2, 4).reshape(B, s * s, p * p)
        x = self.patch_embed(x)
        x = torch.cat([self.cls_token.expand(B, 1, -1), x], dim=1) + self.pos_embed
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])

    def state(self):
        return self.state_dict()

    def load(self, sd):
        self.load_state_dict(sd, strict=True)


def vit_loss(model, x, y):
    return F.cross_entropy(model(x), y.long())


if __name__ == "__main__":
    run(sys.argv[1], ViT, vit_loss, lambda x: x)
