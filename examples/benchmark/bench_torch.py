#!/usr/bin/env python3
"""PyTorch side of examples/benchmark: the same workloads, named the same way
(see workloads.go), timed the same way (2 warm-up runs, then the median of
--reps runs), printed as JSON on stdout in seconds per training step. With
--serve it reads names from stdin and answers each (see serve).

    /usr/bin/python3 examples/benchmark/bench_torch.py --reps 7 \
        --workloads gelu/exact/float32,ffn/512x256x1024/float32,mlp/fixed/float32

With no thread option PyTorch runs as installed: nothing is set. --threads
sets the intra-op threads (torch.set_num_threads); --blas-threads, chosen
independently, the BLAS's (OPENBLAS_NUM_THREADS and MKL_NUM_THREADS, set
before torch is imported; a value already in the environment must agree).
The inter-op threads are left as installed. Debian's torch runs its matrix
products in OpenBLAS on OpenBLAS's own threads, whatever its intra-op count.

Workload families:
  gelu/<exact|tanh>/<dtype>      forward + backward of GELU on 4M elements
  copy/gelu-traffic/<dtype>      the same loads and stores: y <- x; dx <- x + up
  ffn/<tokens>x<d>x<dff>/<dtype> one training step of the pre-LN feed-forward block:
                                 LayerNorm -> Linear(d, dff) -> GELU -> Linear(dff, d) + residual,
                                 MSE loss, SGD with momentum 0.9
  gemm/<tokens>x<d>x<dff>/<dtype> the six matrix products of that step alone
  mlp/<fixed|shuffledN>/float32  Adam step of the GELU paper's MNIST MLP (784 -> 8 x 128 -> 10,
                                 GELU, batch 128, cross-entropy, lr 1e-3) on one batch, or over a
                                 shuffled pass of N random MNIST-shaped examples (time per step)
  gpt/L<n>-d<w>-h<h>-T<t>-B<b>/<dtype>
                                 AdamW step (PyTorch's defaults: lr 1e-3, weight decay 0.01) of
                                 nanoGPT's model on one fixed batch: n pre-LN blocks of width w, h
                                 causal heads, exact-GELU MLP 4w, biases, tied embeddings, no
                                 dropout, vocabulary 91, context t, batch b; nanoGPT's init

<dtype> is float32, float64, or bfloat16 for ffn, gemm and gpt: the float32
model with its forward pass under torch.autocast("cpu", dtype=torch.bfloat16)
(the backward outside it), float32 master weights and optimizer state.

--params prints, instead of timing, the parameter count of each --workloads
model (gpt only): {"name": ..., "params": n}, one line each.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

GELU_N = 4 << 20
WARMUP = 2
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, help="intra-op threads (torch.set_num_threads); default: as installed")
    ap.add_argument("--blas-threads", type=int, help="the BLAS's threads (OPENBLAS_NUM_THREADS, MKL_NUM_THREADS); default: as installed")
    ap.add_argument("--workloads", help="comma-separated workload names")
    ap.add_argument("--serve", action="store_true", help="read workload names from stdin instead, answer each with a JSON line")
    ap.add_argument("--params", action="store_true", help="print the parameter count of each --workloads model (gpt only) instead of timing")
    args = ap.parse_args()
    if not args.serve and not args.workloads:
        ap.error("want --workloads or --serve")
    if args.reps < 1 or min(args.threads or 1, args.blas_threads or 1) < 1:
        ap.error(f"--reps {args.reps} --threads {args.threads} --blas-threads {args.blas_threads}: want each >= 1")
    return args


ARGS = parse_args()
# The BLAS under torch reads these when it loads: set before import.
for var in BLAS_THREAD_VARS if ARGS.blas_threads else ():
    have = os.environ.setdefault(var, str(ARGS.blas_threads))
    if have != str(ARGS.blas_threads):
        sys.exit(f"bench_torch.py: {var}={have} in the environment, but --blas-threads {ARGS.blas_threads}")

import math  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.float32}
# The families with a bfloat16 variant: a float32 model whose forward pass
# runs under torch.autocast("cpu", dtype=torch.bfloat16), the backward
# outside it, as PyTorch's documentation does it.
AUTOCAST = ("ffn", "gemm", "gpt")


def timed(run, steps, reps):
    for _ in range(WARMUP):
        run()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        ts.append((time.perf_counter() - t0) / steps)
    return statistics.median(ts)


def gelu_inputs(dtype):
    g = torch.Generator().manual_seed(1)
    x = 3 * torch.randn(GELU_N, generator=g, dtype=dtype)
    up = torch.randn(GELU_N, generator=g, dtype=dtype)
    return x, up


def gelu(form, dtype):
    approximate = {"exact": "none", "tanh": "tanh"}[form]
    x, up = gelu_inputs(dtype)
    x.requires_grad_()

    def run():
        x.grad = None
        y = nn.functional.gelu(x, approximate=approximate)
        y.backward(up)

    return run, 1


def copy(args, dtype):
    if args != "gelu-traffic":
        raise ValueError(f"copy {args!r}, want gelu-traffic")
    x, up = gelu_inputs(dtype)
    y, dx = torch.empty_like(x), torch.empty_like(x)

    def run():
        y.copy_(x)
        torch.add(x, up, out=dx)

    return run, 1


def shape(args):
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", args)
    if not m:
        raise ValueError(f"shape {args!r}, want <tokens>x<d>x<dff>")
    return tuple(int(v) for v in m.groups())


class FeedForward(nn.Module):
    def __init__(self, d, dff):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, dff)
        self.fc2 = nn.Linear(dff, d)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


def autocast(on):
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=on)


def ffn(args, dtype, amp=False):
    tokens, d, dff = shape(args)
    torch.manual_seed(1)
    model = FeedForward(d, dff).to(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(tokens, d, dtype=dtype)
    y = torch.randn(tokens, d, dtype=dtype)

    def run():
        opt.zero_grad(set_to_none=True)
        with autocast(amp):
            loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    return run, 1


def gemm(args, dtype, amp=False):
    tokens, d, dff = shape(args)
    torch.manual_seed(1)
    r = lambda *s: torch.randn(*s, dtype=dtype)  # noqa: E731
    x, w1, w2, h, gy, gh = r(tokens, d), r(dff, d), r(d, dff), r(tokens, dff), r(tokens, d), r(tokens, dff)
    outs = [torch.empty(tokens, dff, dtype=dtype), torch.empty(tokens, d, dtype=dtype), torch.empty(tokens, dff, dtype=dtype),
            torch.empty(d, dff, dtype=dtype), torch.empty(tokens, d, dtype=dtype), torch.empty(dff, d, dtype=dtype)]

    def run():
        # The same six products as workloads.go: 2 forward, 4 backward.
        torch.mm(x, w1.t(), out=outs[0])
        torch.mm(h, w2.t(), out=outs[1])
        torch.mm(gy, w2, out=outs[2])
        torch.mm(gy.t(), h, out=outs[3])
        torch.mm(gh, w1, out=outs[4])
        torch.mm(gh.t(), x, out=outs[5])

    def run_autocast():
        # Under autocast (which takes no out=): bfloat16 operands, bfloat16 results.
        with autocast(True):
            return (torch.mm(x, w1.t()), torch.mm(h, w2.t()), torch.mm(gy, w2), torch.mm(gy.t(), h), torch.mm(gh, w1), torch.mm(gh.t(), x))

    return (run_autocast if amp else run), 1


def mlp(args, dtype):
    batch, classes = 128, 10
    if args == "fixed":
        n = batch
    else:
        m = re.fullmatch(r"shuffled(\d+)", args)
        if not m or int(m.group(1)) < batch:
            raise ValueError(f"mlp {args!r}, want fixed or shuffled<N> with N >= {batch}")
        n = int(m.group(1))
    torch.manual_seed(1)
    layers, width = [], 784
    for _ in range(8):
        layers += [nn.Linear(width, 128), nn.GELU()]
        width = 128
    model = nn.Sequential(*layers, nn.Linear(width, classes)).to(dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    xs = torch.rand(n, 784, generator=g, dtype=dtype)
    ys = torch.randint(0, classes, (n,), generator=g)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    if args == "fixed":
        return (lambda: step(xs, ys)), 1
    nb = n // batch  # drop the last incomplete batch

    def run():
        # What a PyTorch user writes for in-memory data (a DataLoader over a
        # TensorDataset collates row by row and is several times slower).
        perm = torch.randperm(n, generator=g)
        for i in range(nb):
            idx = perm[i * batch:(i + 1) * batch]
            step(xs.index_select(0, idx), ys.index_select(0, idx))

    return run, nb


# The gpt workload: nanoGPT's model.py as PyTorch 1.13 runs it (no
# scaled_dot_product_attention before 2.0: nanoGPT's explicit attention),
# with dropout 0 left out, as examples/benchmark's nn.GPT.
GPT_VOCAB = 91  # the distinct characters of Newton's Opticks, examples/char-gpt's vocabulary


class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads, t):
        super().__init__()
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.heads, self.d = heads, d
        self.register_buffer("bias", torch.tril(torch.ones(t, t)).view(1, 1, t, t))

    def forward(self, x):
        b, t, d = x.size()
        q, k, v = self.c_attn(x).split(d, dim=2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = nn.functional.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d, heads, t):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, t)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, layers, d, heads, t, vocab):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, d), wpe=nn.Embedding(t, d),
            h=nn.ModuleList([Block(d, heads, t) for _ in range(layers)]), ln_f=nn.LayerNorm(d)))
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, ids, targets):
        t = ids.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(ids) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def gpt_config(args):
    m = re.fullmatch(r"L(\d+)-d(\d+)-h(\d+)-T(\d+)-B(\d+)", args)
    if not m:
        raise ValueError(f"gpt {args!r}, want L<blocks>-d<width>-h<heads>-T<context>-B<batch>")
    layers, d, heads, t, batch = (int(v) for v in m.groups())
    if min(layers, d, heads, t, batch) < 1 or d % heads:
        raise ValueError(f"gpt {args!r}: want sizes >= 1 and heads dividing the width")
    return layers, d, heads, t, batch


def gpt_model(args, dtype):
    layers, d, heads, t, _ = gpt_config(args)
    torch.manual_seed(1)
    return GPT(layers, d, heads, t, GPT_VOCAB).to(dtype)


def gpt(args, dtype, amp=False):
    _, _, _, t, batch = gpt_config(args)
    model = gpt_model(args, dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, GPT_VOCAB, (batch, t), generator=g)
    targets = torch.randint(0, GPT_VOCAB, (batch, t), generator=g)

    def run():
        opt.zero_grad(set_to_none=True)
        with autocast(amp):
            loss = model(ids, targets)
        loss.backward()
        opt.step()

    return run, 1


def params(name):
    """The number of trainable scalars of workload name's model (shared tensors once)."""
    parts = name.split("/")
    if len(parts) != 3 or parts[0] != "gpt" or parts[2] not in DTYPES:
        raise ValueError(f"--params {name!r}: want gpt/<args>/<float32|float64>")
    return sum(p.numel() for p in gpt_model(parts[1], DTYPES[parts[2]]).parameters())


FAMILIES = {"gelu": gelu, "copy": copy, "ffn": ffn, "gemm": gemm, "mlp": mlp, "gpt": gpt}


def build(name):
    parts = name.split("/")
    if len(parts) != 3 or parts[0] not in FAMILIES or parts[2] not in DTYPES:
        raise ValueError(f"workload {name!r}: want <{'|'.join(FAMILIES)}>/<args>/<float32|float64|bfloat16>")
    if parts[2] == "bfloat16":
        if parts[0] not in AUTOCAST:
            raise ValueError(f"workload {name!r}: {parts[0]} has no bfloat16 variant, only {', '.join(AUTOCAST)}")
        return FAMILIES[parts[0]](parts[1], torch.float32, amp=True)
    return FAMILIES[parts[0]](parts[1], DTYPES[parts[2]])


def mapped_libraries():
    """The paths of the BLAS-like libraries torch loaded, from the process's memory map."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return []
    return sorted(p for p in paths if re.search(r"blas|mkl|dnnl|gomp|iomp", os.path.basename(p)))


def libraries():
    names = sorted({os.path.basename(p) for p in mapped_libraries()})
    return ", ".join(names) or "none found"


def blas_threads():
    """OpenBLAS's thread count as OpenBLAS reports it, 0 where there is no OpenBLAS."""
    import ctypes
    for path in mapped_libraries():
        if "openblas" in os.path.basename(path):
            try:
                return int(ctypes.CDLL(path).openblas_get_num_threads())
            except (OSError, AttributeError):
                pass
    return 0


def cpu_capability():
    m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    return m.group(1) if m else "unknown"


def main():
    if ARGS.threads:
        torch.set_num_threads(ARGS.threads)
    info = {"torch": torch.__version__, "blas": libraries(), "cpu_capability": cpu_capability(),
            "threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads(),
            "blas_threads": blas_threads()}
    if ARGS.serve:
        serve(info)
        return
    if ARGS.params:
        for name in ARGS.workloads.split(","):
            print(json.dumps({"name": name, "params": params(name)}))
        return
    info["times"] = {name: timed(*build(name), ARGS.reps) for name in ARGS.workloads.split(",")}
    print(json.dumps(info))


def serve(info):
    """Answers workload names read line by line from stdin with one JSON line
    each, after a first line with info: examples/benchmark keeps one such
    process per thread setting, so that it can alternate the two sides
    workload by workload."""
    print(json.dumps(info), flush=True)
    for line in sys.stdin:
        name = line.strip()
        try:
            reply = {"name": name, "seconds": timed(*build(name), ARGS.reps)}
        except ValueError as e:
            reply = {"name": name, "error": str(e)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
