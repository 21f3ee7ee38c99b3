"""Writes nanogpt_parity/: nanoGPT's GPT (its model.py, bias=False, no
dropout) trained by its train.py's step (configure_optimizers' AdamW groups,
betas (0.9, 0.99), weight decay 0.1, clip_grad_norm_ 1.0, every group's lr set
before the step) on fixed random windows of the Opticks' first 90%, with
train.py's get_lr (lr·(t+1)/(warmup+1) during the warmup, then a cosine to
min_lr at lr_decay_iters = the number of steps), so that
TestTrainerMatchesNanoGPT can replay it step by step.

  init.safetensors  the initial weights (seed 1337), nanoGPT's state_dict
                    without lm_head.weight (tied) and the attn.bias masks
  ix.txt            each step's window starts, one row per step
  losses.txt        each step's loss and gradient norm before clipping

Run with PyTorch installed and nanoGPT's model.py on the path, from the
module root:
  NANOGPT_DIR=/path/to/nanoGPT python3 examples/char-gpt/testdata/nanogpt_parity.py
"""
import json, math, os, struct, sys
import numpy as np
import torch

sys.path.insert(0, os.environ["NANOGPT_DIR"])
from model import GPT, GPTConfig  # noqa: E402

STEPS, BATCH, T, LR, MIN_LR, WARMUP = 60, 4, 16, 3e-3, 3e-4, 6
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nanogpt_parity")
os.makedirs(out, exist_ok=True)

text = open("datasets/text/opticks.txt", encoding="utf-8").read()
chars = sorted(set(text))  # datasets.CharVocab's order: increasing code point
stoi = {c: i for i, c in enumerate(chars)}
ids = np.array([stoi[c] for c in text[: int(len(text) * 0.9)]], dtype=np.int64)

torch.manual_seed(1337)
m = GPT(GPTConfig(block_size=T, vocab_size=len(chars), n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=False))
sd = {k: v for k, v in m.state_dict().items() if not k.endswith("attn.bias") and k != "lm_head.weight"}
header, blobs, off = {}, [], 0
for k, v in sd.items():
    b = v.detach().contiguous().numpy().astype("<f4").tobytes()
    header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
    blobs.append(b)
    off += len(b)
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open(os.path.join(out, "init.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

ix = torch.randint(len(ids) - T, (STEPS, BATCH), generator=torch.Generator().manual_seed(7))
np.savetxt(os.path.join(out, "ix.txt"), ix.numpy(), fmt="%d")


def lr_at(t):  # train.py's get_lr, lr_decay_iters = STEPS
    if t < WARMUP:
        return LR * (t + 1) / (WARMUP + 1)
    if t > STEPS:
        return MIN_LR
    coeff = 0.5 * (1.0 + math.cos(math.pi * (t - WARMUP) / (STEPS - WARMUP)))
    return MIN_LR + coeff * (LR - MIN_LR)


opt = m.configure_optimizers(0.1, LR, (0.9, 0.99), "cpu")
rows = []
for t in range(STEPS):
    for g in opt.param_groups:
        g["lr"] = lr_at(t)
    x = torch.stack([torch.from_numpy(ids[i : i + T]) for i in ix[t]])
    y = torch.stack([torch.from_numpy(ids[i + 1 : i + T + 1]) for i in ix[t]])
    _, loss = m(x, y)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    rows.append((loss.item(), norm.item()))
np.savetxt(os.path.join(out, "losses.txt"), np.array(rows), fmt="%.9g")
print(f"torch {torch.__version__}: {STEPS} steps, last loss {rows[-1][0]:.6f}")
