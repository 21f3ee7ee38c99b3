"""Minimal safetensors reader/writer (8-byte header length, JSON header,
raw little-endian data) with numpy, so the parity scripts need only torch."""
import json
import struct

import numpy as np
import torch

DT = {"F32": np.float32, "F64": np.float64}


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n :]
    out = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=DT[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


def save(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        arr = t.detach().cpu().contiguous().numpy()
        b = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": {np.float32: "F32", np.float64: "F64"}[arr.dtype.type], "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
