"""Reductions of the approximation and bounds measurements: maxima and sums of K - Z Z^T.

The compiled loops fill one partial per row (no allocation, no array method inside:
numba's ``np.zeros`` and ``ndarray.max`` in a parallel loop took 1.7 s to compile); the
partials are reduced by numpy.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba import prange

from .elementwise import FMA


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _abs_max_sum_sq_rows(E, mx, sa, s2):
    n, m = E.shape
    for i in prange(n):
        a_max = 0.0
        a_sum = 0.0
        a_sq = 0.0
        for j in range(m):
            v = E[i, j]
            a_max = max(a_max, abs(v))
            a_sum += abs(v)
            a_sq += v * v
        mx[i] = a_max
        sa[i] = a_sum
        s2[i] = a_sq


def abs_max_sum_sq(E):
    """(max |E|, sum |E|, sum E^2) of a 2-d float64 array, from per-row partials."""
    n = E.shape[0]
    mx, sa, s2 = np.zeros(n), np.zeros(n), np.zeros(n)
    if n and E.shape[1]:
        _abs_max_sum_sq_rows(E, mx, sa, s2)
    return (float(mx.max()) if n else 0.0), float(sa.sum()), float(s2.sum())


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _max_abs_diff_upper_rows(G, K, mx):
    n = G.shape[0]
    for i in prange(n):
        a_max = 0.0
        for j in range(i, n):
            a_max = max(a_max, abs(np.float64(G[i, j]) - K[i, j]))
        mx[i] = a_max


def max_abs_diff_upper(G, K):
    """max_{i <= j} |G[i, j] - K[i, j]| over the upper triangle (diagonal included).

    G and K are square and symmetric (G = Z Z^T, K the exact Gram), so the upper
    triangle is every pair once; G may be float32, the difference is taken in float64.
    """
    n = G.shape[0]
    if not n:
        return 0.0
    mx = np.zeros(n)
    _max_abs_diff_upper_rows(G, K, mx)
    return float(mx.max())
