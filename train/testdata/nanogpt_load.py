#!/usr/bin/env python3
"""The PyTorch side of train/modelfile_test.go: the files a trainer with
Model.Module writes for a GPT, loaded into nanoGPT's GPT with the strict
load_state_dict a nanoGPT user writes, in float64.

    nanogpt_load.py DIR

DIR/job.json holds "model_args" (nanoGPT's GPTConfig fields), "torch2"
(true: the torch >= 2 layout, no mask buffers; false: torch 1.x's, with
them; whatever torch is installed), "files" (names of files in DIR) and
"x", "y" (token ids and targets, batch x T). Each file is loaded into a
fresh GPT(GPTConfig(**model_args)) strictly; the result, DIR/loaded.json,
holds each file's loss on (x, y) or, if torch refused it, its error:
{"losses": {name: loss}, "errors": {name: message}, "torch": version}.

The GPT is nn/testdata/nanogpt.py (nanoGPT's state_dict layout); the file
format without the safetensors package is nn/testdata/st.py.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "nn", "testdata"))

import torch  # noqa: E402

try:
    from safetensors.torch import load_file
except ImportError:
    import st

    load_file = st.load

d = sys.argv[1]
job = json.load(open(os.path.join(d, "job.json")))
os.environ["NANOGPT_TORCH2"] = "1" if job["torch2"] else "0"

from nanogpt import GPT, GPTConfig  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
x = torch.tensor(job["x"], dtype=torch.long)
y = torch.tensor(job["y"], dtype=torch.long)
out = {"losses": {}, "errors": {}, "torch": torch.__version__}
for name in job["files"]:
    model = GPT(GPTConfig(**job["model_args"]))
    try:
        model.load_state_dict(load_file(os.path.join(d, name)))
    except RuntimeError as e:
        out["errors"][name] = " ".join(str(e).split()) or "error"
        continue
    model.eval()
    with torch.no_grad():
        _, loss = model(x, y)
    out["losses"][name] = loss.item()
json.dump(out, open(os.path.join(d, "loaded.json"), "w"))
