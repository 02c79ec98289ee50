"""Random binning: the hash of each row's bin in each random grid."""
from __future__ import annotations

import math

import numba as nb
import numpy as np
from numba import prange


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def binning_keys(X, pitch, shift, mult, keys):
    """keys[i, p] = hash of the bin of x_i in grid p: sum_j mult[j] *
    floor((x_ij - shift[p, j]) / pitch[p, j]) in wrapping uint64 arithmetic
    (random odd multipliers; collisions have probability ~ n^2 / 2^64)."""
    n, d = X.shape
    P = pitch.shape[0]
    for i in prange(n):
        for p in range(P):
            h = np.uint64(0)
            for j in range(d):
                c = np.int64(math.floor((np.float64(X[i, j]) - shift[p, j]) / pitch[p, j]))
                h += mult[j] * np.uint64(c)
            keys[i, p] = h
