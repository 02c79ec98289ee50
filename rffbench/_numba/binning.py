"""Grids of the inputs: random binning's hash of each row's bin in each random grid, and the
Maji-Berg unary codes of the intersection kernel."""
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


@nb.njit(inline="always", cache=True, error_model="numpy")
def unary_position(x, top, nbins):
    """t = x nbins / top of a value clipped to [0, top], in [0, nbins]: the one rule of
    unary_counts and unary_codes.  The product and division round, so a value equal to
    top can give t above nbins (0.1 * 3 / 0.1 = 3.0000000000000004): t is clipped too,
    or a code would get nbins + 1 entries, one past its coordinate's columns."""
    t = min(max(np.float64(x), 0.0), top) * nbins / top
    return min(t, np.float64(nbins))


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def unary_counts(X, top, nbins, counts):
    """counts[i] = the non-zeros of row i's unary codes (unary_codes)."""
    n, d = X.shape
    for i in prange(n):
        c = 0
        for k in range(d):
            if top[k] > 0.0:
                c += int(math.ceil(unary_position(X[i, k], top[k], nbins[k])))
        counts[i] = c


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def unary_codes(X, top, nbins, first, indptr, values, indices):
    """The Maji-Berg unary codes of the rows of X as CSR entries (rows start at indptr):
    coordinate k's value clipped to [0, top[k]], t = x nbins[k] / top[k]; columns
    first[k] + j for j < ceil(t), value sqrt(top[k] / nbins[k]) times 1 (j < floor t) or the
    fraction t - floor t (the last)."""
    n, d = X.shape
    for i in prange(n):
        p = indptr[i]
        for k in range(d):
            if top[k] > 0.0:
                t = unary_position(X[i, k], top[k], nbins[k])
                w = math.sqrt(top[k] / nbins[k])
                full = int(math.floor(t))
                for j in range(full):
                    values[p] = w
                    indices[p] = first[k] + j
                    p += 1
                if t > full:
                    values[p] = w * (t - full)
                    indices[p] = first[k] + full
                    p += 1
