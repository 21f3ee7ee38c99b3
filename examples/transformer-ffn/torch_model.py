#!/usr/bin/env python3
"""The PyTorch twin of examples/transformer-ffn: the module CharFFN, whose
state_dict names and shapes are those of the Go model, so weights move both
ways (needs torch, e.g. Debian's python3-torch: /usr/bin/python3).

Write PyTorch-initialized weights for the Go program's -init:

    /usr/bin/python3 torch_model.py --init torch.safetensors
    go run ./examples/transformer-ffn -init torch.safetensors

Load safetensors files (strictly: every name and shape must match) and
print, for each, the mean cross-entropy of the next character over the
first windows of a text, computed in float64:

    /usr/bin/python3 torch_model.py --check out/transformer-ffn/gelu/model.safetensors --act gelu

List the parameter names and shapes:

    /usr/bin/python3 torch_model.py --names

The sizes (--context, --embed, --dim, --hidden, --layers) default to the Go
program's defaults and must match its flags. The vocabulary is the sorted
set of distinct characters (code points) of --text, as datasets.CharVocab
builds it; --text defaults to the Opticks text the Go program embeds, and
--vocab N overrides the size when only --init is wanted.

safetensors files are read and written by nn/testdata/st.py, with the
standard library and numpy, so only torch is needed.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "nn", "testdata"))
from st import load, save  # noqa: E402

DEFAULT_TEXT = os.path.join(HERE, "..", "..", "datasets", "text", "opticks.txt")


class SigmoidGated(nn.Module):
    """x·σ(βx) (activation.SigmoidGated); β = 1.702 is activation.GELUSigmoid."""

    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return x * torch.sigmoid(self.beta * x)


def activation(name):
    """The module for an activation.ParseActivation name."""
    base, _, arg = name.strip().lower().partition(":")
    if base == "relu":
        return nn.ReLU()
    if base == "gelu":
        return nn.GELU()
    if base == "gelu_tanh":
        return nn.GELU(approximate="tanh")
    if base == "gelu_sigmoid":
        return SigmoidGated(1.702)
    if base == "softplus":
        return nn.Softplus()
    if base in ("silu", "swish"):
        return nn.SiLU()
    if base == "elu":
        return nn.ELU(alpha=float(arg) if arg else 1.0)
    if base == "sigmoid_gated":
        return SigmoidGated(float(arg) if arg else math.sqrt(8 / math.pi))
    raise SystemExit(f"unknown activation {name!r}")


class FeedForward(nn.Module):
    """nn.FeedForward (pre-LN): x + fc2(act(fc1(ln(x))))."""

    def __init__(self, dim, hidden, act):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.act = act

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


class CharFFN(nn.Module):
    """Next character from the previous `context` characters (rows × context
    indices): embed, flatten, project to dim, feed-forward blocks, LayerNorm,
    logits over the vocabulary."""

    def __init__(self, vocab, context, embed, dim, hidden, layers, act):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.proj = nn.Linear(context * embed, dim)
        self.blocks = nn.ModuleList([FeedForward(dim, hidden, act) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.proj(self.embed(idx).flatten(1))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def read_text(path):
    # newline="" keeps \r\n as two characters, as the Go program reads bytes.
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--init", metavar="OUT", help="write a torch-initialized state_dict (float32) as safetensors to OUT")
    mode.add_argument("--check", metavar="FILE", nargs="+", help="load each FILE strictly and print (one JSON line each) the cross-entropy over --windows windows of --text")
    mode.add_argument("--names", action="store_true", help="print the state_dict names and shapes")
    p.add_argument("--text", default=DEFAULT_TEXT, help="UTF-8 text whose characters are the vocabulary (default: the Opticks text)")
    p.add_argument("--vocab", type=int, help="vocabulary size, instead of reading --text")
    p.add_argument("--context", type=int, default=8, help="K, previous characters per prediction")
    p.add_argument("--embed", type=int, default=32, help="e, embedding size per character")
    p.add_argument("--dim", type=int, default=256, help="d, model width")
    p.add_argument("--hidden", type=int, default=1024, help="d_ff, inner width of each block")
    p.add_argument("--layers", type=int, default=2, help="L, number of blocks")
    p.add_argument("--act", default="gelu", help="activation (only --check uses it; activation.ParseActivation names)")
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed for --init")
    p.add_argument("--windows", type=int, default=4096, help="--check: score the first this many windows of --text (0: all)")
    p.add_argument("--json", metavar="OUT", help="--check: also write the results as a JSON list to OUT")
    a = p.parse_args()

    text = None
    if a.vocab is None or a.check:
        text = read_text(a.text)
        chars = sorted(set(text))
        index = {c: i for i, c in enumerate(chars)}
        if a.vocab is not None and a.vocab != len(chars):
            raise SystemExit(f"--vocab {a.vocab} but {a.text} has {len(chars)} distinct characters")
        a.vocab = len(chars)
    model = CharFFN(a.vocab, a.context, a.embed, a.dim, a.hidden, a.layers, activation(a.act))

    if a.names:
        for name, t in model.state_dict().items():
            print(name, tuple(t.shape))
    elif a.init:
        torch.manual_seed(a.seed)
        model = CharFFN(a.vocab, a.context, a.embed, a.dim, a.hidden, a.layers, activation(a.act))
        save(a.init, model.state_dict(), metadata={"format": "pt"})
        print(f"wrote {a.init}: {sum(t.numel() for t in model.state_dict().values())} parameters, vocab {a.vocab}")
    else:
        ids = torch.tensor([index[c] for c in text])
        n = len(ids) - a.context
        if a.windows:
            n = min(n, a.windows)
        if n <= 0:
            raise SystemExit(f"{a.text}: {len(ids)} characters, want more than the context {a.context}")
        ctx = torch.stack([ids[t - a.context : t] for t in range(a.context, a.context + n)])
        results = []
        for path in a.check:
            try:
                model.load_state_dict(load(path), strict=True)
            except RuntimeError as e:
                raise SystemExit(f"{path} does not fit CharFFN(vocab={a.vocab}, context={a.context}, embed={a.embed}, dim={a.dim}, hidden={a.hidden}, layers={a.layers}): {e}")
            with torch.no_grad():
                loss = nn.functional.cross_entropy(model.double().eval()(ctx), ids[a.context : a.context + n]).item()
            model.float()
            res = {"file": path, "loss": loss, "bits_per_char": loss / math.log(2), "windows": n, "torch": torch.__version__}
            print(json.dumps(res))
            results.append(res)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(results, f)

if __name__ == "__main__":
    sys.exit(main())
