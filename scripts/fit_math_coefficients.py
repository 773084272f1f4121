#!/usr/bin/python3
"""Fits the polynomial coefficients of codegen/math_functions.cc: near-minimax fits in double
precision (weighted least squares on Chebyshev nodes, reweighted by the error until it levels
out, after Lawson), against references computed by mpmath at 40 digits. Prints each fit's
coefficients as float literals and its largest relative error before rounding to float; the
errors of the functions as compiled are measured by tests/codegen/math_functions_are_accurate.cc.
Needs python3-numpy and python3-mpmath (Debian)."""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def fit(fn, lo, hi, degree, var, scale_of, rounds=30, nodes=2000):
    k = np.arange(nodes)
    x = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / nodes)
    y = np.array([float(fn(mp.mpf(float(t)))) for t in x])
    scale = np.abs(np.array([float(scale_of(mp.mpf(float(t)))) for t in x]))
    a = np.vander(var(x), degree + 1, increasing=True)
    w = np.ones(nodes)
    for r in range(rounds):
        c, *_ = np.linalg.lstsq(a * (w / scale)[:, None], y * w / scale, rcond=None)
        err = (a @ c - y) / scale
        if r < rounds - 1:
            w = w * np.abs(err) ** 0.5
            w /= w.sum()
    return c, np.max(np.abs(err))


def show(name, fitted):
    c, err = fitted
    print(f"{name}: {', '.join('%.9gf' % np.float32(t) for t in c)}  (max rel. error {err:.2g})")


half_ln2 = float(mp.log(2)) / 2
# exp: e^r = 1 + r + r^2 P(r), |r| <= ln(2)/2.
show("exp P", fit(lambda r: (mp.exp(r) - 1 - r) / r**2, -half_ln2, half_ln2, 4, lambda x: x,
                  lambda r: mp.exp(r) / r**2))
# log: log(m) = 2s + s^3 Q(s^2), s = (m - 1)/(m + 1), |s| <= 3 - 2 sqrt(2).
s_max = 3 - 2 * np.sqrt(2)
show("log Q", fit(lambda s: (mp.log((1 + s) / (1 - s)) - 2 * s) / s**3, 1e-6, s_max, 3,
                  lambda x: x * x, lambda s: 2 / s**2))
# tanh: x + x^3 T(x^2) below 0.625.
show("tanh T", fit(lambda x: (mp.tanh(x) - x) / x**3, 1e-4, 0.625, 5, lambda x: x * x,
                   lambda x: mp.tanh(x) / x**3))
# erf: x + x E(x^2) below 0.921875.
show("erf E", fit(lambda x: mp.erf(x) / x - 1, 1e-4, 0.921875, 6, lambda x: x * x,
                  lambda x: mp.erf(x) / x))
# erfc: e^(-a^2) R(1 / (1 + a)) on [0.921875, 4].
show("erfc R", fit(lambda a: mp.erfc(a) * mp.exp(a * a), 0.921875, 4.0, 7, lambda x: 1 / (1 + x),
                   lambda a: mp.erfc(a) * mp.exp(a * a)))
