#!/usr/bin/env python3
"""Writes activations.csv.gz: f, f', f'' of every activation in package ops,
evaluated with mpmath at 60 significant digits, for the accuracy tests.

Run from the repository root (needs mpmath: `apt-get install python3-mpmath`
or `pip install mpmath`):

    python3 ops/testdata/gen_activations.py

The derivatives are written in closed form here and checked against mpmath's
own numerical differentiation (mp.diff) before anything is written, so the
fixture does not depend on the Go code's derivation.

Columns: name, x (exact hex float), f, f', f'' (30 digits), and T1, T2: the
magnitudes of the terms summed in the closed forms of f' and f''.

Inputs: a dense grid k/16 over [-40, 40]; 2000 random float32 values in
[-40, 40] and 400 with log-uniform magnitude in [1e-30, 1e3]; the far
negative tail down to -60 (where float64 results are subnormal); and the
special values ±0, ±Inf, NaN, the smallest subnormals and the largest finite
float32 and float64 values. Every x is stored as an exact hex float.
"""
import gzip
import math
import os
import random
import struct

import mpmath as mp

mp.mp.dps = 60

SQRT_2_OVER_PI = mp.sqrt(2 / mp.pi)
TANH_A = mp.mpf("0.044715")
SIGMOID_BETA = mp.mpf("1.702")
# activation.All() uses math.Sqrt(8/math.Pi) for the sigmoid-gated unit; the test
# reads this exact float64 value from the fixture's header.
GATED_BETA = float(mp.sqrt(8 / mp.pi))


def phi(x):
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def Phi(x):
    if abs(x) > 1e4:
        # mpmath's erfc overflows near 1e308; the Mills-ratio series is
        # exact to far beyond 60 digits at this size.
        z = abs(x)
        tail = phi(z) / z * (1 - 1 / z**2 + 3 / z**4 - 15 / z**6 + 105 / z**8)
        return tail if x < 0 else 1 - tail
    return mp.erfc(-x / mp.sqrt(2)) / 2


def sig(t):
    return 1 / (1 + mp.exp(-t))


# Each activation returns f, f', f'' and the magnitudes T1, T2 of the terms
# summed in the closed forms of f' and f'' (|a|+|b| for a+b). Where T is much
# larger than the result, the terms cancel and any evaluation in floating
# point loses relative accuracy; the Go test then bounds the error by a few
# ulp of T instead of a few ulp of the result.


def no_cancellation(f, f1, f2):
    return f, f1, f2, abs(f1), abs(f2)


def gated(q, dq, d2q):
    """f = x*sigma(q(x)) and its first two derivatives, given q, q', q''."""

    def fns(x):
        # sigma(-q) is evaluated directly: 1 - sigma(q) would cancel to 0
        # for q beyond ~138 even at 60 digits.
        s, t = sig(q(x)), sig(-q(x))
        f = x * s
        a, b = s, x * s * t * dq(x)
        f1 = a + b
        terms2 = (2 * dq(x), x * (t - s) * dq(x) ** 2, x * d2q(x))
        f2 = s * t * sum(terms2)
        return f, f1, f2, abs(a) + abs(b), s * t * sum(abs(v) for v in terms2)

    return fns


def gelu(x):
    P, p = Phi(x), phi(x)
    return x * P, P + x * p, (2 - x * x) * p, abs(P) + abs(x * p), (2 + x * x) * p


def relu(x):
    return no_cancellation((x if x > 0 else mp.mpf(0)), mp.mpf(1 if x > 0 else 0), mp.mpf(0))


def softplus(x):
    return no_cancellation(mp.log1p(mp.exp(x)), sig(x), sig(x) * sig(-x))


def elu(x):
    if x > 0:
        return no_cancellation(x, mp.mpf(1), mp.mpf(0))
    return no_cancellation(mp.expm1(x), mp.exp(x), mp.exp(x))


def linear(beta):
    return gated(lambda x: beta * x, lambda x: beta, lambda x: mp.mpf(0))


ACTIVATIONS = {
    "relu": relu,
    "gelu": gelu,
    "gelu_tanh": gated(
        lambda x: 2 * SQRT_2_OVER_PI * (x + TANH_A * x**3),
        lambda x: 2 * SQRT_2_OVER_PI * (1 + 3 * TANH_A * x**2),
        lambda x: 12 * SQRT_2_OVER_PI * TANH_A * x,
    ),
    "gelu_sigmoid": linear(SIGMOID_BETA),
    "softplus": softplus,
    "silu": linear(mp.mpf(1)),
    "elu": elu,
    "sigmoid_gated": linear(mp.mpf(GATED_BETA)),
}

# Limits at the infinities: (f, f', f'', T1, T2) at -inf and at +inf.
LIMITS = {
    "relu": ((0.0, 0.0, 0.0, 0.0, 0.0), (math.inf, 1.0, 0.0, 1.0, 0.0)),
    "elu": ((-1.0, 0.0, 0.0, 0.0, 0.0), (math.inf, 1.0, 0.0, 1.0, 0.0)),
}
DEFAULT_LIMITS = ((-0.0, 0.0, 0.0, 0.0, 0.0), (math.inf, 1.0, 0.0, 1.0, 0.0))


def check_closed_forms():
    """The closed-form derivatives agree with numerical differentiation."""
    for name, fn in ACTIVATIONS.items():
        for x in [-7.3, -2.5, -1.0, -0.3, 0.4, 1.1, 3.9, 9.5]:
            x = mp.mpf(x)
            f, f1, f2, _, _ = fn(x)
            n1 = mp.diff(lambda t: fn(t)[0], x, 1)
            n2 = mp.diff(lambda t: fn(t)[0], x, 2)
            for got, want in ((f1, n1), (f2, n2)):
                if abs(got - want) > mp.mpf(10) ** -40 * max(1, abs(want)):
                    raise SystemExit(f"{name} at {x}: closed form {got} != numerical {want}")


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def inputs():
    xs = [k / 16 for k in range(-640, 641)]
    rng = random.Random(20261121)
    xs += [f32(rng.uniform(-40, 40)) for _ in range(2000)]
    xs += [f32(rng.choice((-1, 1)) * 10 ** rng.uniform(-30, 3)) for _ in range(400)]
    xs += [-40 - k / 4 for k in range(1, 81)]  # far negative tail to -60
    xs += [-100.0, -1e3, -1e6, -1e20, 1e6, 1e20, 1e-300, -1e-300]
    tiny64 = 5e-324
    tiny32 = f32(1.401298464324817e-45)
    max32 = f32(3.4028234663852886e38)
    max64 = 1.7976931348623157e308
    xs += [0.0, -0.0, tiny64, -tiny64, tiny32, -tiny32, max32, -max32, max64, -max64]
    xs += [math.inf, -math.inf, math.nan]
    return xs


def fmt(v, digits=30):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if v != 0 and abs(v) < mp.mpf("1e-400"):
        # Far below float64's smallest subnormal: both precisions round to ±0.
        return "-0.0" if v < 0 else "0.0"
    return mp.nstr(v, digits, strip_zeros=False, min_fixed=1, max_fixed=0)


def main():
    check_closed_forms()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "activations.csv.gz")
    rows = 0
    with gzip.open(out + ".tmp", "wt", compresslevel=9) as w:
        w.write(f"# generated by gen_activations.py with mpmath {mp.__version__}, {mp.mp.dps} digits\n")
        w.write(f"# sigmoid_gated beta = {GATED_BETA.hex()}\n")
        w.write("name,x,f,d1,d2,t1,t2\n")
        for name, fn in ACTIVATIONS.items():
            lo, hi = LIMITS.get(name, DEFAULT_LIMITS)
            for x in inputs():
                if math.isnan(x):
                    vals = (math.nan,) * 5
                elif math.isinf(x):
                    vals = hi if x > 0 else lo
                else:
                    vals = fn(mp.mpf(x))
                vals = [fmt(v) for v in vals[:3]] + [fmt(v, 4) for v in vals[3:]]
                w.write(",".join([name, x.hex()] + vals) + "\n")
                rows += 1
    os.replace(out + ".tmp", out)
    print(f"wrote {rows} rows to {out}")


if __name__ == "__main__":
    main()
