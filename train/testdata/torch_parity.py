#!/usr/bin/env python3
"""PyTorch side of train/parity_test.go (run by the Go test; needs torch,
e.g. Debian's python3-torch: /usr/bin/python3).

    torch_parity.py DIR

DIR holds, written by the Go test:
  init.safetensors     the Go model's initial parameters (state_dict names)
  batches.safetensors  x.<i> and y.<i> for every step i
  config.json          {"dim", "hidden", "steps", "post_ln", "activation",
                        "lr", "momentum", "dampening", "nesterov", "weight_decay"}
It writes:
  losses.json          the per-step training losses, in float64
  torch_init.safetensors, torch_forward.json
                       a model initialized by torch.manual_seed(0) and its
                       output on x.0, for the Go side to load and compare.

The safetensors files are read and written by nn/testdata/st.py, with the
standard library and numpy, so only torch is needed.
"""
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "nn", "testdata"))
from st import load, save  # noqa: E402


class FeedForward(nn.Module):
    """The pre-/post-LN block of nn.FeedForward, with the same parameter names."""

    def __init__(self, d, dff, act, post_ln):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, dff)
        self.fc2 = nn.Linear(dff, d)
        self.act = act
        self.post_ln = post_ln

    def forward(self, x):
        if self.post_ln:
            return self.ln(x + self.fc2(self.act(self.fc1(x))))
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


ACTS = {"gelu": nn.GELU(), "gelu_tanh": nn.GELU(approximate="tanh"), "relu": nn.ReLU(), "silu": nn.SiLU()}


def main():
    d = sys.argv[1]
    cfg = json.load(open(os.path.join(d, "config.json")))
    torch.set_default_dtype(torch.float64)
    model = FeedForward(cfg["dim"], cfg["hidden"], ACTS[cfg["activation"]], cfg["post_ln"])
    model.load_state_dict(load(os.path.join(d, "init.safetensors")), strict=True)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"], dampening=cfg["dampening"],
                          nesterov=cfg["nesterov"], weight_decay=cfg["weight_decay"])
    batches = load(os.path.join(d, "batches.safetensors"))
    losses = []
    for i in range(cfg["steps"]):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(batches[f"x.{i}"]), batches[f"y.{i}"])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    json.dump({"losses": losses, "torch": torch.__version__}, open(os.path.join(d, "losses.json"), "w"))

    torch.manual_seed(0)
    fresh = FeedForward(cfg["dim"], cfg["hidden"], ACTS[cfg["activation"]], cfg["post_ln"])
    save(os.path.join(d, "torch_init.safetensors"), fresh.state_dict())
    with torch.no_grad():
        out = fresh(batches["x.0"]).reshape(-1).tolist()
    json.dump({"output": out}, open(os.path.join(d, "torch_forward.json"), "w"))


if __name__ == "__main__":
    main()
