#!/usr/bin/env python3
"""PyTorch side of train/torchtest's TestLinearMatchesPyTorch, the package
documentation's sketch (run by the Go test; needs torch, e.g. Debian's
python3-torch).

    linear_parity.py DIR

DIR holds, written by the Go test (torchtest.WriteInputs):
  init.safetensors     the Go model's initial parameters: weight, bias
  batches.safetensors  x.<i> and y.<i> for every step i
  config.json          {"in", "out", "lr"}
It writes:
  losses.json          {"losses": [...], "torch": version}: the per-step MSE
                       losses of plain SGD, in float64
  torch_init.safetensors, torch_forward.json
                       a Linear initialized by torch.manual_seed(0) and its
                       output on x.0, for the Go side to load and compare.
"""
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "nn", "testdata"))
from st import load, save  # noqa: E402


def main():
    d = sys.argv[1]
    cfg = json.load(open(os.path.join(d, "config.json")))
    torch.set_default_dtype(torch.float64)
    model = nn.Linear(cfg["in"], cfg["out"])
    model.load_state_dict(load(os.path.join(d, "init.safetensors")), strict=True)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    batches = load(os.path.join(d, "batches.safetensors"))
    losses = []
    for i in range(len(batches) // 2):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(batches[f"x.{i}"]), batches[f"y.{i}"])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    json.dump({"losses": losses, "torch": torch.__version__}, open(os.path.join(d, "losses.json"), "w"))

    torch.manual_seed(0)
    fresh = nn.Linear(cfg["in"], cfg["out"])
    save(os.path.join(d, "torch_init.safetensors"), fresh.state_dict())
    with torch.no_grad():
        out = fresh(batches["x.0"]).reshape(-1).tolist()
    json.dump({"output": out}, open(os.path.join(d, "torch_forward.json"), "w"))


if __name__ == "__main__":
    main()
