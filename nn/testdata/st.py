"""safetensors in Python with the standard library and numpy (an 8-byte
little-endian header length, a JSON header, raw little-endian data), so
that the PyTorch scripts need only torch. F32 and F64, the dtypes the Go
side writes.

The one copy for every script that moves tensors to or from Go:
nn/testdata/*_torch.py, nn/testdata/nanogpt_run.py (without the
safetensors package), train/testdata/torch_parity.py,
train/testdata/nanogpt_load.py, train/torchtest/testdata/linear_parity.py
and examples/transformer-ffn/torch_model.py; and for users without the
safetensors package (the train/safetensors doc points here,
TestPythonReaderRoundTrip checks it). They import it by path:

    sys.path.insert(0, "<this directory>")
    from st import load, save
"""
import json
import os
import struct

import numpy as np
import torch

DT = {"F32": np.float32, "F64": np.float64}


def load(path):
    """Every tensor of the file at path, by name, as torch tensors in the
    file's dtype; the __metadata__ entry is dropped."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n :]
    out = {}
    for name, e in header.items():
        if e["dtype"] not in DT:
            raise SystemExit(f"{path}: tensor {name!r} has dtype {e['dtype']}, want F32 or F64")
        a, b = e["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=np.dtype(DT[e["dtype"]]).newbyteorder("<")).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.astype(DT[e["dtype"]]))
    return out


def save(path, tensors, metadata=None):
    """Writes tensors (name → float32 or float64 tensor, in the dict's
    order) to path atomically (a temporary file, then a rename). metadata,
    a dict of strings, becomes the header's leading __metadata__ entry."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        arr = t.detach().cpu().contiguous().numpy()
        b = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": {np.float32: "F32", np.float64: "F64"}[arr.dtype.type], "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
