#!/usr/bin/env python3
"""Writes mish.csv.gz and mish_profile.csv: Mish, x*tanh(softplus(x)), its
first two derivatives and its profile, evaluated with mpmath at 50
significant digits, for the tests of the user-defined Mish in
example_own_test.go.

Run from the repository root (needs mpmath: `apt-get install python3-mpmath`
or `pip install mpmath`):

    python3 ops/activation/testdata/gen_mish.py

The derivatives are written in closed form here, with tanh, sech and the
logistic function (not the rational forms in e^x the Go example uses), and
checked against mpmath's own numerical differentiation (mp.diff) before
anything is written.

mish.csv.gz has the columns of activations.csv.gz (see gen_activations.py):
x (exact hex float), f, f', f'' (30 digits), and T1, T2: the magnitudes of
the terms summed in f' = t + x*g and f'' = 2g + x*g', where t =
tanh(softplus(x)) and g = t'. Inputs: a dense grid k/16 over [-40, 40],
2000 random float32 values in [-40, 40] and 400 with log-uniform magnitude
in [1e-30, 1e3]; both tails to +-800 with a fine grid where results become
subnormal (f below x = -700, f'' above x = 340); the special values.

mish_profile.csv has the numbers analysis.ProfileOf computes: the minimum,
f'(0), f''(0), the inflection points in [-10, 10], and E[f(X)], E[f'(X)],
E[f'(X)^2], Var[f'(X)] for X ~ N(0, 1) by mpmath's quadrature.
"""
import gzip
import math
import os
import random
import struct

import mpmath as mp

mp.mp.dps = 50


def sig(t):
    return 1 / (1 + mp.exp(-t))


def softplus(x):
    return x + mp.log1p(mp.exp(-x)) if x > 0 else mp.log1p(mp.exp(x))


def mish(x):
    """f, f', f'', T1, T2 at x."""
    sp = softplus(x)
    t = mp.tanh(sp)
    c = mp.sech(sp) ** 2  # 1 - t^2 without cancelling to 0 for large x
    s, s_ = sig(x), sig(-x)
    g = s * c  # t' = sigmoid(x) * sech^2(softplus(x))
    dg = s * c * (s_ - 2 * t * s)  # g' = g*(1 - s) - 2*t*s*g
    return x * t, t + x * g, 2 * g + x * dg, abs(t) + abs(x * g), abs(2 * g) + abs(x * dg)


# (f, f', f'', T1, T2) at -inf and at +inf.
LIMITS = ((-0.0, 0.0, 0.0, 0.0, 0.0), (math.inf, 1.0, 0.0, 1.0, 0.0))


def check_closed_forms():
    """The closed-form derivatives agree with numerical differentiation."""
    for x in [-30.5, -7.3, -2.5, -1.0, -0.3, 0.4, 1.1, 3.9, 9.5, 31.25]:
        x = mp.mpf(x)
        f, f1, f2, _, _ = mish(x)
        n1 = mp.diff(lambda t: mish(t)[0], x, 1)
        n2 = mp.diff(lambda t: mish(t)[0], x, 2)
        for got, want in ((f1, n1), (f2, n2)):
            if abs(got - want) > mp.mpf(10) ** -35 * max(1, abs(want)):
                raise SystemExit(f"mish at {x}: closed form {got} != numerical {want}")


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def inputs():
    xs = [k / 16 for k in range(-640, 641)]
    rng = random.Random(20261127)
    xs += [f32(rng.uniform(-40, 40)) for _ in range(2000)]
    xs += [f32(rng.choice((-1, 1)) * 10 ** rng.uniform(-30, 3)) for _ in range(400)]
    xs += [s * (40 + 5 * k) for k in range(1, 153) for s in (-1, 1)]  # tails to +-800
    xs += [-690 - k / 4 for k in range(0, 281)]  # f, f', f'' subnormal from about -708
    xs += [340 + k / 4 for k in range(0, 161)]  # f'' subnormal from about 355
    xs += [-1000.0, -1489.5, -1491.0, -1e6, -1e20, 1e6, 1e20, 1e-300, -1e-300]
    tiny64 = 5e-324
    tiny32 = f32(1.401298464324817e-45)
    max32 = f32(3.4028234663852886e38)
    max64 = 1.7976931348623157e308
    xs += [0.0, -0.0, tiny64, -tiny64, tiny32, -tiny32, max32, -max32, max64, -max64]
    xs += [math.inf, -math.inf, math.nan]
    return [float(x) for x in xs]


def fmt(v, digits=30):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if v != 0 and abs(v) < mp.mpf("1e-400"):
        # Far below float64's smallest subnormal: both precisions round to +-0.
        return "-0.0" if v < 0 else "0.0"
    return mp.nstr(v, digits, strip_zeros=False, min_fixed=1, max_fixed=0)


def profile():
    """(name, value) pairs: what analysis.ProfileOf computes for Mish."""
    f = lambda x: mish(x)[0]
    d1 = lambda x: mish(x)[1]
    d2 = lambda x: mish(x)[2]
    xmin = mp.findroot(d1, -1.2)
    rows = [("min_x", xmin), ("min_f", f(xmin)), ("d1_at_0", d1(mp.mpf(0))), ("d2_at_0", d2(mp.mpf(0)))]
    # Inflection points: sign changes of f'' on a grid over [-10, 10],
    # each refined by findroot.
    grid = [mp.mpf(k) / 100 for k in range(-1000, 1001)]
    k = 0
    for a, b in zip(grid, grid[1:]):
        if d2(a) * d2(b) < 0:
            rows.append((f"inflection_{k}", mp.findroot(d2, (a, b), solver="anderson")))
            k += 1
    pdf = lambda x: mp.npdf(x)
    e = lambda h: mp.quad(lambda x: h(x) * pdf(x), [-mp.inf, -10, 0, 10, mp.inf])
    m1, m2 = e(d1), e(lambda x: d1(x) ** 2)
    rows += [("mean_f", e(f)), ("mean_d1", m1), ("mean_d1sq", m2), ("var_d1", m2 - m1 * m1)]
    return rows


def main():
    check_closed_forms()
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "mish.csv.gz")
    rows = 0
    with gzip.GzipFile(out + ".tmp", "wb", compresslevel=9, mtime=0) as raw:
        w = lambda s: raw.write(s.encode())
        w(f"# generated by gen_mish.py with mpmath {mp.__version__}, {mp.mp.dps} digits\n")
        w("x,f,d1,d2,t1,t2\n")
        for x in inputs():
            if math.isnan(x):
                vals = (math.nan,) * 5
            elif math.isinf(x):
                vals = LIMITS[1] if x > 0 else LIMITS[0]
            else:
                vals = mish(mp.mpf(x))
            vals = [fmt(v) for v in vals[:3]] + [fmt(v, 4) for v in vals[3:]]
            w(",".join([x.hex()] + vals) + "\n")
            rows += 1
    os.replace(out + ".tmp", out)
    prof = os.path.join(here, "mish_profile.csv")
    with open(prof + ".tmp", "w") as w:
        w.write(f"# generated by gen_mish.py with mpmath {mp.__version__}, {mp.mp.dps} digits\n")
        w.write("quantity,value\n")
        for name, v in profile():
            w.write(f"{name},{mp.nstr(v, 25, min_fixed=-5, max_fixed=5)}\n")
    os.replace(prof + ".tmp", prof)
    print(f"wrote {rows} rows to {out} and the profile to {prof}")


if __name__ == "__main__":
    main()
