#!/usr/bin/env python3
"""The PyTorch side of nn/nanogpt_test.go: a nanoGPT user's lines, run
against nanogpt.py (nanoGPT's state_dict layout) in float64.

    nanogpt_run.py DIR

DIR/job.json, written by the Go test, holds "task", "model_args" (nanoGPT's
GPTConfig fields), "torch2" (true: the torch >= 2 layout, no mask buffers;
false: torch 1.x's, with them; whatever torch is installed) and "ids"
(token ids, batch x T). Tasks:

  interop  (a) loads DIR/go.safetensors, written by train.SaveWeights, into
           GPT(GPTConfig(**model_args)) with a strict load_state_dict and
           writes its logits on ids; tries DIR/go_other.safetensors (the
           other torch's layout) the same way and records its error;
           (b) saves a fresh GPT's state_dict (torch.manual_seed(0)) as
           DIR/nano.safetensors, as a user would, and writes its logits.
           Result: DIR/interop.json.
  train    loads DIR/init.safetensors (train.SaveWeights) strictly and
           takes job["steps"] AdamW steps (lr, weight_decay, clip from the
           job) on the batches x.<i>, y.<i> of DIR/batches.safetensors.
           Result: DIR/losses.json, as train/torchtest reads it.

With the safetensors package installed its load_file/save_file are used;
without it, nn/testdata/st.py, which reads and writes the same format.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    from safetensors.torch import load_file, save_file
except ImportError:
    import st

    load_file = st.load

    def save_file(tensors, filename):
        st.save(filename, tensors)

import torch.nn.functional as F  # noqa: E402

import nanogpt  # noqa: E402
from nanogpt import GPT, GPTConfig  # noqa: E402

d = sys.argv[1]
job = json.load(open(os.path.join(d, "job.json")))
real_torch2 = hasattr(F, "scaled_dot_product_attention")
os.environ["NANOGPT_TORCH2"] = "1" if job.get("torch2") else "0"

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
model_args = job["model_args"]
ids = torch.tensor(job.get("ids", [[0]]), dtype=torch.long)


def logits_of(model):
    model.eval()
    with torch.no_grad():
        logits, _ = model(ids)
    return logits.reshape(-1).tolist()


def interop():
    out = {"torch": torch.__version__, "mask_buffers": not nanogpt.has_sdpa(), "real_mask_buffers": not real_torch2}

    # (a) the project's file into nanoGPT, as a nanoGPT user loads it:
    model = GPT(GPTConfig(**model_args))
    model.load_state_dict(load_file(os.path.join(d, "go.safetensors")))
    out["a_logits"] = logits_of(model)
    try:
        GPT(GPTConfig(**model_args)).load_state_dict(load_file(os.path.join(d, "go_other.safetensors")))
        out["other_layout_error"] = ""
    except RuntimeError as e:
        out["other_layout_error"] = " ".join(str(e).split()) or "error"

    # (b) nanoGPT's state_dict saved for the project (clone: the tied
    # lm_head.weight shares wte's storage, which safetensors refuses):
    torch.manual_seed(0)
    model = GPT(GPTConfig(**model_args))
    save_file({k: v.clone() for k, v in model.state_dict().items()}, os.path.join(d, "nano.safetensors"))
    out["b_logits"] = logits_of(model)
    json.dump(out, open(os.path.join(d, "interop.json"), "w"))


def train():
    model = GPT(GPTConfig(**model_args))
    model.load_state_dict(load_file(os.path.join(d, "init.safetensors")))
    batches = load_file(os.path.join(d, "batches.safetensors"))
    opt = torch.optim.AdamW(model.parameters(), lr=job["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=job["weight_decay"])
    model.train()
    losses, norms = [], []
    for i in range(job["steps"]):
        opt.zero_grad()
        _, loss = model(batches[f"x.{i}"].long(), batches[f"y.{i}"].long())
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), job["clip"])))
        opt.step()
        losses.append(loss.item())
    json.dump({"losses": losses, "norms": norms, "torch": torch.__version__}, open(os.path.join(d, "losses.json"), "w"))


{"interop": interop, "train": train}[job["task"]]()
