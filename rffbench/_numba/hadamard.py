"""Structured projections (sorf, fastfood, srht) by the fast Walsh-Hadamard transform.

Rows are transformed ROW_BLOCK at a time: the FWHT works on (L, ROW_BLOCK) tiles, every
butterfly a SIMD operation across rows whatever the stride h.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba import prange

from .elementwise import FMA

#: rows transformed together by the structured projections: the FWHT then works
#: on (L, ROW_BLOCK) tiles, every butterfly a SIMD operation across rows
#: whatever the stride h (measured: 4 rows 1.6-2x faster than one row at a time
#: or 8-16 rows, whose tiles leave L1 for L = 1024).
ROW_BLOCK = 4


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _fwht_cols(V):
    """Unnormalised Walsh-Hadamard transform of every column of V (L, r) in place.

    Two butterfly levels (h and 2h) per sweep over V, in registers: each element is
    loaded and stored once per two levels instead of once per level (the butterflies
    are load/store-bound in L1, not flop-bound).  The additions are those of the
    radix-2 order, so the result is bitwise the same; an odd last level is radix-2."""
    L, r = V.shape
    h = 1
    while 2 * h < L:
        for i in range(0, L, 4 * h):
            for j in range(i, i + h):
                for t in range(r):
                    a = V[j, t]
                    b = V[j + h, t]
                    c = V[j + 2 * h, t]
                    d = V[j + 3 * h, t]
                    s0 = a + b
                    s1 = a - b
                    s2 = c + d
                    s3 = c - d
                    V[j, t] = s0 + s2
                    V[j + h, t] = s1 + s3
                    V[j + 2 * h, t] = s0 - s2
                    V[j + 3 * h, t] = s1 - s3
        h *= 4
    if h < L:
        for j in range(h):
            for t in range(r):
                x = V[j, t]
                y = V[j + h, t]
                V[j, t] = x + y
                V[j + h, t] = x - y


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fwht_columns(V):
    """Each column of V (L, r), L a power of 2, <- H column (unnormalised, the
    Sylvester order of scipy.linalg.hadamard); column blocks in parallel."""
    r = V.shape[1]
    for c in prange((r + ROW_BLOCK - 1) // ROW_BLOCK):
        _fwht_cols(V[:, c * ROW_BLOCK:min(r, (c + 1) * ROW_BLOCK)])


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fwht_tiles_repeat(V, reps, out):
    """out[t] <- H^reps V[t] (V: (T, L, r), tiles contiguous as in the structured maps),
    each tile copied into a contiguous local tile and transformed there ``reps`` times,
    tiles in parallel: the in-cache FWHT rate that the speed measurement counts the
    structured maps' limit in (H H = L I).  V is only read, so every call starts from the
    same tiles (nothing to renormalise between calls, no pass of numpy's in the time)."""
    T, L, r = V.shape
    if r != ROW_BLOCK:
        raise ValueError("fwht_tiles_repeat: tiles must have ROW_BLOCK columns")
    for t in prange(T):
        # a contiguous local tile of ROW_BLOCK columns, as sorf_project / fastfood_project
        # allocate it: the constant width lets LLVM unroll the butterflies' inner loop as
        # there (a width read from V's shape made the tile rate up to 1.2x slower than the
        # maps' own FWHTs)
        W = np.empty((L, ROW_BLOCK))
        for k in range(L):
            for j in range(ROW_BLOCK):
                W[k, j] = V[t, k, j]
        for _ in range(reps):
            _fwht_cols(W)
        for k in range(L):
            for j in range(ROW_BLOCK):
                out[t, k, j] = W[k, j]


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _load_tile(X, i0, r, sign, V):
    """V[:, t] <- x_(i0+t) * sign, zero-padded to L rows (and zero columns past r)."""
    d = X.shape[1]
    L, R = V.shape
    for k in range(d):
        s = sign[k]
        for t in range(r):
            V[k, t] = X[i0 + t, k] * s
        for t in range(r, R):
            V[k, t] = 0.0
    for k in range(d, L):
        for t in range(R):
            V[k, t] = 0.0


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _store_tile(V, i0, r, base, scale, rowscale, out, ncols):
    """out[i0+t, base+k] = scale * rowscale[k] * V[k, t] for the columns below ncols."""
    L = V.shape[0]
    for k in range(min(L, ncols - base)):
        s = scale * rowscale[k]
        for t in range(r):
            out[i0 + t, base + k] = s * V[k, t]


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def sorf_project(X, D1, D2, D3, scale, out, ncols):
    """out[i, b*L + k] = scale * (H D1[b] H D2[b] H D3[b] x_i)[k], x_i zero-padded
    to L; only the first ``ncols`` columns of out are written (last block truncated: the
    whole C-contiguous out is passed, not a view of its columns, whose layout would change
    with the number of rows and compile a second version).
    H unnormalised: the caller folds L^{-3/2} into ``scale``."""
    n = X.shape[0]
    B, L = D1.shape
    ones = np.ones(L)
    for ib in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        i0 = ib * ROW_BLOCK
        r = min(ROW_BLOCK, n - i0)
        V = np.empty((L, ROW_BLOCK))
        for b in range(B):
            _load_tile(X, i0, r, D3[b], V)
            _fwht_cols(V)
            for k in range(L):
                s = D2[b, k]
                for t in range(ROW_BLOCK):
                    V[k, t] *= s
            _fwht_cols(V)
            for k in range(L):
                s = D1[b, k]
                for t in range(ROW_BLOCK):
                    V[k, t] *= s
            _fwht_cols(V)
            _store_tile(V, i0, r, b * L, scale, ones, out, ncols)


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fastfood_project(X, Bsign, Perm, G, S, scale, out, ncols):
    """out[i, b*L + k] = scale * (S[b] H G[b] Perm[b] H Bsign[b] x_i)[k], x_i
    zero-padded to L, permutation as v2[k] = v[Perm[b, k]]; the first ``ncols`` columns
    of out written (as ``sorf_project``)."""
    n = X.shape[0]
    B, L = G.shape
    for ib in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        i0 = ib * ROW_BLOCK
        r = min(ROW_BLOCK, n - i0)
        V = np.empty((L, ROW_BLOCK))
        W = np.empty((L, ROW_BLOCK))
        for b in range(B):
            _load_tile(X, i0, r, Bsign[b], V)
            _fwht_cols(V)
            for k in range(L):
                src = Perm[b, k]
                g = G[b, k]
                for t in range(ROW_BLOCK):
                    W[k, t] = V[src, t] * g
            _fwht_cols(W)
            _store_tile(W, i0, r, b * L, scale, S[b], out, ncols)


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def srht_project(X, signs, rows, scale, out):
    """out[i, b*L + k] = scale * (H signs[b] x_i)[rows[b, k]], x_i zero-padded to L: the
    subsampled randomized Hadamard transform, block b keeping the rows ``rows[b]`` of its
    transform (H unnormalised); only the first out.shape[1] columns are written."""
    n = X.shape[0]
    B, L = signs.shape
    D = out.shape[1]
    for ib in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        i0 = ib * ROW_BLOCK
        r = min(ROW_BLOCK, n - i0)
        V = np.empty((L, ROW_BLOCK))
        for b in range(B):
            _load_tile(X, i0, r, signs[b], V)
            _fwht_cols(V)
            for k in range(min(L, D - b * L)):
                src = rows[b, k]
                for t in range(r):
                    out[i0 + t, b * L + k] = scale * V[src, t]
