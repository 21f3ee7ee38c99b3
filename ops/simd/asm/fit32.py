#!/usr/bin/env python3
"""Fits the tables of the float32-lane kernels (gelu32.go, gated32.go) and
writes tables32.go. Needs python3-mpmath and python3-numpy; run from
ops/simd/asm:

    /usr/bin/python3 fit32.py > tables32.go

Exact GELU. With z = |x|, c = 1/sqrt(2 pi), Q(z) = Phi(-z) and
E(z) = e^{-z^2/2}, the kernels need on 0 <= z <= 13

    G(z) = Q(z)/E(z)                    (f:  Q = E G)
    H(z) = G(z) - c z                   (f': Phi(-z) - z phi(z) = E H)

H has a root z0 ~ 0.7518 (f' = 0 at x = -z0), so the kernels write
H = (beta - z) F with beta = z0 (as z0h + z0l, beta - z computed exactly by
Fast2Sum) where z < 1.75, beta = 0.75 beyond (there beta - z is exact);
F = H/(beta - z) > 0 is smooth. Each of G and F is tabulated over
intervals of z chosen by the bits of y = z + 1: the exponent's low two
bits and the top M bits of the mantissa, 4 * 2^M entries (M = 3: 32, one
VPERMT2PS per row with AVX-512; M = 2: 16, two VPERMPS and a blend with
AVX2). An interval [a, b) has an expansion point c_i near its middle and

    F(c_i + v) = F_i (1 + omega_i(v)),   omega_i(v) = v (a1 + a2 v + ... + ad v^(d-1)),

F_i a float32. c_i is searched so that F_i is F(c_i) to 2^-33 and a1 is
its float32 to 2^-33 of |omega| (a1 cannot be compensated by the other
coefficients); a2..ad are fitted (weighted least squares iterated towards
minimax) on the interval widened by 1%, for the kernel's rounded index,
and checked with the float32 coefficients in 40-digit arithmetic.

The exponential: e^{-z^2/2} = 2^m 2^{j/N} e^r with k = 16m + j (N = 16,
AVX-512) or 8m + j (N = 8, AVX2); 2^{j/N} = T_j e^{tau_j} with T_j a
float32 and tau_j folded into r; e^r - 1 = r + c2 r^2 + ... minimax on
|r| <= ln2/(2N) (plus a margin). The f'' variant folds 2/sqrt(2 pi) into
T_j.
"""
import math
import struct

import mpmath as mp
import numpy as np

mp.mp.dps = 40
C = 1 / mp.sqrt(2 * mp.pi)
ZMAX = 13


def f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def G(z):
    return mp.exp(z * z / 2) * mp.erfc(z / mp.sqrt(2)) / 2


Z0 = mp.findroot(lambda z: G(z) - C * z, 0.75)
Z0H = f32(Z0)
Z0L = f32(Z0 - Z0H)
# z0h - z is exact for z in [z0h/2 - ..., 1.7518): Sterbenz below 2 z0h, and
# the result's ulp is no coarser than z's up to z0h + 1. Intervals ending
# at or below ROOTHI use beta = z0 (Fast2Sum below z0h/2).
ROOTHI = 1.7518


def intervals(M):
    """The intervals [a, b) of z with their table index."""
    out = []
    y, e = 1.0, 0
    while y - 1 <= ZMAX:
        nxt = y + 2.0**e / 2**M
        bits = struct.unpack("I", struct.pack("f", y))[0]
        out.append((y - 1, nxt - 1, (bits >> (23 - M)) & (4 * 2**M - 1)))
        y = nxt
        if y >= 2.0 ** (e + 1):
            e += 1
    return out


def funcs(kind, b):
    """F and F' on an interval ending at b, and its (beta_hi, beta_lo)."""
    if kind == "G":
        def FF(z):
            g = G(z)
            return g, z * g - C  # G' = z G - c
        return FF, None

    def HH(z):
        g = G(z)
        return g - C * z, z * g - 2 * C

    if b <= ROOTHI:
        bh, bl, beta = Z0H, Z0L, Z0
    else:
        bh, bl, beta = 0.75, 0.0, mp.mpf(0.75)

    def FF(z):
        h, hp = HH(z)
        d = beta - z
        if abs(d) < mp.mpf(10) ** -20:  # the root: F = -H'(z0)
            return -hp, -mp.diff(lambda t: HH(t)[1], z) / 2
        return h / d, (hp * d + h) / (d * d)
    return FF, (bh, bl)


def center(FF, a, b):
    """c near the middle of [a, b) with F(c) and a1 = F'(c)/F(c) close to float32."""
    w, mid = b - a, (a + b) / 2
    best = None
    for n in range(4096):
        for sgn in (1, -1):
            c = f32(mid + sgn * n * w * 2.0**-17)
            v, d = FF(mp.mpf(c))
            fc = f32(v)
            a0 = abs(v / fc - 1)
            a1 = d / fc
            e1 = abs(f32(a1) - a1) * w / 2
            score = max(a0, e1)
            if best is None or score < best[0]:
                best = (score, c, fc, f32(a1))
            if score < mp.mpf(2) ** -33:
                return best
    return best


def fit(FF, a, b, deg, c, fc, a1):
    w = b - a
    lo, hi = a - 0.01 * w - c, b + 0.01 * w - c
    n = 300
    vs = [(lo + hi) / 2 + (hi - lo) / 2 * math.cos(math.pi * (k + 0.5) / n) for k in range(n)]
    s = max(abs(lo), abs(hi))
    t = np.array(vs) / s
    tgt = np.array([float(FF(mp.mpf(c) + mp.mpf(v))[0] / mp.mpf(fc) - 1 - mp.mpf(a1) * mp.mpf(v)) for v in vs])
    A = np.stack([t**k for k in range(2, deg + 1)], axis=1)
    wts = np.ones(n) / n
    for _ in range(300):  # Lawson: reweight towards the minimax fit
        co, *_ = np.linalg.lstsq(A * np.sqrt(wts)[:, None], tgt * np.sqrt(wts), rcond=None)
        wts = wts * (np.abs(A @ co - tgt) + 1e-300)
        wts /= wts.sum()
    ak = [a1] + [f32(co[k - 2] / s**k) for k in range(2, deg + 1)]
    worst = maxom = mp.mpf(0)
    for k in range(401):
        v = mp.mpf(lo + (hi - lo) * k / 400)
        om = FF(mp.mpf(c) + v)[0] / mp.mpf(fc) - 1
        S = mp.mpf(0)
        for x in reversed(ak):
            S = S * v + mp.mpf(x)
        worst = max(worst, abs(v * S - om))
        maxom = max(maxom, abs(om))
    return ak, worst, maxom


def table(M, kind, deg):
    n = 4 * 2**M
    rows = [[0.0] * n for _ in range(deg + 2 + (2 if kind == "D" else 0))]
    worst = maxom = mp.mpf(0)
    for a, b, i in intervals(M):
        FF, beta = funcs("G" if kind == "Q" else "D", b)
        if a == 0 and kind == "Q" and M == 3:
            # Expanded at 0, where G = 1/2 exactly: for tiny z the pair
            # (P, c) is then normalized (|c| ~ |a1 z| P), so that the AVX-512
            # f needs no renormalization where x·lo would round in the
            # subnormal range (AVX2's wider first interval keeps its middle).
            c, fc, a1 = 0.0, 0.5, f32(-2 * C)
        else:
            _, c, fc, a1 = center(FF, a, b)
        if a > 0:  # z - c exact (Sterbenz); in [0, b) its error is below 2^-28
            assert c / 2 <= a and b <= 2 * c, (a, b, c)
        ak, w, om = fit(FF, a, b, deg, c, fc, a1)
        worst, maxom = max(worst, w), max(maxom, om)
        col = [c, fc] + ak + (list(beta) if beta else [])
        for r, v in zip(rows, col):
            r[i] = v
    assert worst < mp.mpf(2) ** -27.5, (M, kind, worst)
    assert maxom < 0.15, (M, kind, maxom)
    return rows, worst, maxom


def hexf(v):
    return float(v).hex()


def emit(name, rows, doc):
    print(doc)
    print(f"var {name} = [{len(rows)}][{len(rows[0])}]float32{{")
    for r in rows:
        print("\t{" + ", ".join(hexf(v) for v in r) + "},")
    print("}")
    print()


def expm1_poly(N, deg):
    """Minimax c2..cdeg of e^r - 1 - r on |r| <= ln2/(2N) + margin."""
    R = math.log(2) / (2 * N) * 1.01 + 2**-20
    rs = np.cos(np.pi * (np.arange(2000) + 0.5) / 2000) * R
    tgt = np.expm1(rs) - rs
    A = np.stack([rs**k for k in range(2, deg + 1)], axis=1)
    w = np.ones(len(rs))
    for _ in range(200):
        co, *_ = np.linalg.lstsq(A * np.sqrt(w)[:, None], tgt * np.sqrt(w), rcond=None)
        w *= np.abs(A @ co - tgt) + 1e-300
        w /= w.sum()
    co = [f32(v) for v in co]
    err = float(np.max(np.abs(A @ np.array(co) - tgt)))
    assert err < 2**-29, (N, deg, err)
    return co, err


def exp_rows(N, scale):
    """T_j and tau_j = ln(2^(j/N) scale / T_j), repeated to 16 entries."""
    hi, tau = [], []
    for j in range(16):
        v = mp.mpf(2) ** (mp.mpf(j % N) / N) * scale
        h = f32(v)
        hi.append(h)
        tau.append(f32(mp.log(v / h)))
    return [hi, tau]


def ln2_split(N, bits):
    """ln2/N as L1 + L2, L1 with the given significant bits."""
    L = mp.log(2) / N
    e = mp.floor(mp.log(L, 2))
    L1 = mp.floor(L / mp.mpf(2) ** (e - bits + 1)) * mp.mpf(2) ** (e - bits + 1)
    return f32(L1), f32(L - L1)


def xmax_forward():
    """The largest multiple of 1/16 below which Q(z) >= 2^-122 (the f pair
    stays normal: its lo part, about 2^-4 of hi, then has 26 bits)."""
    z = mp.mpf(13)
    while G(z) * mp.exp(-z * z / 2) < mp.mpf(2) ** -122:
        z -= mp.mpf(1) / 16
    return float(z)


print("// Code generated by fit32.py; DO NOT EDIT.")
print()
print("package main")
print()

deg = {("Q", 3): 5, ("D", 3): 5, ("Q", 2): 7, ("D", 2): 6}
stats = []
for M in (3, 2):
    for kind in ("Q", "D"):
        rows, w, om = table(M, kind, deg[kind, M])
        d = deg[kind, M]
        n = 4 * 2**M
        what = ("G(z) = e^{z²/2}·Φ(−z)" if kind == "Q" else
                "F(z) = (G(z) − z/√(2π))/(β − z), β = z0 below 1.75, 0.75 beyond")
        extra = ", β.hi, β.lo" if kind == "D" else ""
        emit(f"gelu32{kind}{n}", rows,
             f"// gelu32{kind}{n} is {what}, over {len(intervals(M))} intervals of z indexed by the\n"
             f"// bits of z + 1 (exponent mod 4, {M} mantissa bits): rows c, F(c), a1 .. a{d}{extra}.\n"
             f"// Fit error of ω 2^{float(mp.log(w, 2)):.1f}, largest |ω| {float(om):.3f}.")

ex16 = exp_rows(16, 1)
ex16phi = exp_rows(16, C)
ex8 = exp_rows(8, 1)
ex8phi = exp_rows(8, C)
emit("gelu32Exp16", ex16, "// gelu32Exp16 is 2^(j/16) = T_j·e^τ_j: rows T_j, τ_j.")
emit("gelu32Exp16Phi", ex16phi, "// gelu32Exp16Phi is 2^(j/16)/√(2π) likewise.")
emit("gelu32Exp8", ex8, "// gelu32Exp8 is 2^(j/8) = T_j·e^τ_j (j = i mod 8): rows T_j, τ_j.")
emit("gelu32Exp8Phi", ex8phi, "// gelu32Exp8Phi is 2^(j/8)/√(2π) likewise.")
p16, e16 = expm1_poly(16, 3)
p8, e8 = expm1_poly(8, 4)
print(f"// gelu32Expm1x16 is c2, c3 of e^r − 1 ≈ r + c2·r² + c3·r³ for |r| ≤ ln2/32 (error 2^{math.log2(e16):.1f}).")
print("var gelu32Expm1x16 = [2]float32{" + ", ".join(hexf(v) for v in p16) + "}")
print()
print(f"// gelu32Expm1x8 is c2 .. c4 of e^r − 1 ≈ r + c2·r² + … for |r| ≤ ln2/16 (error 2^{math.log2(e8):.1f}).")
print("var gelu32Expm1x8 = [3]float32{" + ", ".join(hexf(v) for v in p8) + "}")
print()
l1, l2 = ln2_split(16, 13)
print("// gelu32Ln2x16 is ln2/16 as L1 + L2, L1 with 13 significant bits (k·L1 exact for |k| < 2048).")
print(f"var gelu32Ln2x16 = [2]float32{{{hexf(l1)}, {hexf(l2)}}}")
print()
Z0LL = f32(Z0 - mp.mpf(Z0H) - mp.mpf(Z0L))
print("// gelu32Z0Rest is z0 − β.hi − β.lo of the intervals below 1.75, the third")
print("// float32 of z0: at x = −z0.hi, D = z0 − z is β.lo + this, and β.lo alone")
print("// would be off by 2^−24.8 (elsewhere it is below 2^−48 of D).")
print(f"const gelu32Z0Rest = {hexf(Z0LL)}")
print()
print(f"// gelu32XMaxF bounds −x for the f lanes computed: Φ(x) ≥ 2^−122 there.")
print(f"const gelu32XMaxF = {xmax_forward()}")
print()

# The sigmoid-gated kernels (gated32.go): 2^(j/8) as hi + lo, j = i mod 8,
# and ln2/8 as L1 + L2 with L1 of 14 bits (k·L1 exact for |k| < 1024).
ex = []
for j in range(16):
    v = mp.mpf(2) ** (mp.mpf(j % 8) / 8)
    h = f32(v)
    ex.append((h, f32(v - h)))
print("// gelu32Exp2 is 2^(j/8) (rows hi, lo), for j = i mod 8.")
print("var gelu32Exp2 = [2][16]float32{")
print("\t{" + ", ".join(hexf(a) for a, _ in ex) + "},")
print("\t{" + ", ".join(hexf(b) for _, b in ex) + "},")
print("}")
print()
l1, l2 = ln2_split(8, 14)
print("// gelu32Ln2 is ln2/8 as L1 + L2, L1 with 14 significant bits.")
print(f"var gelu32Ln2 = [2]float32{{{hexf(l1)}, {hexf(l2)}}}")
