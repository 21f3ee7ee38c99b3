"""Writes half_torch.safetensors, the reference for train/safetensors's
BF16 and F16 loading: tensors "bf16" and "f16" as PyTorch stores them
(torch rounds the float64 values below to each dtype), "bf16_f32" and
"f16_f32", PyTorch's conversion of the same tensors to float32 (.float()),
and in __metadata__ the SHA-256 of PyTorch's float32 conversion of every
one of the 65536 bit patterns of each dtype (little-endian float32 bits,
every NaN written as 0x7fc00000, as payloads are not part of the contract).

Run from the module root with the system's torch (Debian's python3-torch):

    /usr/bin/python3 train/safetensors/testdata/half_torch.py

The file is written with the standard library (an 8-byte little-endian
header length, a JSON header, raw little-endian data), as the safetensors
package may be absent.
"""
import hashlib
import json
import os
import struct

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "half_torch.safetensors")

# Zeros of both signs, ordinary values that round, both dtypes' largest
# finite values, their smallest normal and subnormal values and values
# between, and float32's smallest normal (a bf16 normal).
BF16_VALUES = [
    0.0, -0.0, 1.0, -2.5, 1 / 3, -3.14159, 1e5, 7e-3,
    3.3895313892515355e38, -3.3895313892515355e38,  # bf16 max: (2 − 2⁻⁷)·2¹²⁷
    1.1754943508222875e-38,  # 2⁻¹²⁶, float32's smallest normal
    9.183549615799121e-41,  # 2⁻¹³³, bf16's smallest subnormal
    -1.1663108012064884e-38,  # 127·2⁻¹³³, bf16's largest subnormal, negative
    1e-39, 65504.0, 6.103515625e-05, 5.960464477539063e-08, 123.456, -0.1,
    1.00390625,  # 1 + 2⁻⁸: halfway between two bf16 values, rounds to even (1)
]
F16_VALUES = [
    0.0, -0.0, 1.0, -2.5, 1 / 3, -3.14159, 1000.5, 7e-3,
    65504.0, -65504.0,  # f16 max: (2 − 2⁻¹⁰)·2¹⁵
    6.103515625e-05,  # 2⁻¹⁴, f16's smallest normal
    5.960464477539063e-08,  # 2⁻²⁴, f16's smallest subnormal
    -6.097555160522461e-05,  # 1023·2⁻²⁴, f16's largest subnormal, negative
    3e-6, 1e-7, 2.9802322387695312e-08,  # 2⁻²⁵: halfway to 0, rounds to even (0)
    123.456, -0.1, 4096.0, 0.5,
]


def all_patterns_sha256(dtype):
    bits = torch.from_numpy(np.arange(65536, dtype=np.uint16).view(np.int16)).view(dtype)
    f32 = bits.float()
    out = f32.view(torch.int32).numpy().astype("<i4").copy()
    out[torch.isnan(f32).numpy()] = 0x7FC00000
    return hashlib.sha256(out.tobytes()).hexdigest()


def raw(t, name):
    """t's bytes, little-endian, and its safetensors dtype."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes(), "BF16"
    if t.dtype == torch.float16:
        return t.numpy().astype("<f2").tobytes(), "F16"
    return t.numpy().astype("<f4").tobytes(), "F32"


def main():
    bf16 = torch.tensor(BF16_VALUES, dtype=torch.float64).to(torch.bfloat16).reshape(4, 5)
    f16 = torch.tensor(F16_VALUES, dtype=torch.float64).to(torch.float16).reshape(4, 5)
    tensors = [("bf16", bf16), ("bf16_f32", bf16.float()), ("f16", f16), ("f16_f32", f16.float())]
    header = {"__metadata__": {
        "bf16_all_f32_sha256": all_patterns_sha256(torch.bfloat16),
        "f16_all_f32_sha256": all_patterns_sha256(torch.float16),
        "torch": torch.__version__,
    }}
    data, offset = b"", 0
    for name, t in tensors:
        b, dtype = raw(t, name)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        data += b
        offset += len(b)
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(OUT, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
