"""The feature maps' passes over their outputs: a projection's cosines and sines, steps
and ReLUs, exponentials, products and sketches, written in place.

The projection X @ W of the dense Fourier maps is a BLAS GEMM by row blocks inside the
parallel loop (``gemm``), each block's cosines taken while it is in cache.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba import prange

from .blas import gemm
from .elementwise import (
    FMA,
    cos_row_typed,
    exp_typed,
    fast_exp_full_scalar,
    sincos_to_typed,
    wide_vectors,
)

# Fused projection + cosine: each thread takes blocks of GEMM_BLOCK rows, lets a
# single-threaded BLAS (``gemm``; the caller limits BLAS to 1 thread)
# write their arguments, and takes the cosine while the block is still in its
# cache: one pass over the output in memory instead of two (measured 21%
# faster at N=100000, d=8, D=1024; equal at d=512).
GEMM_BLOCK = 64


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _cos_block(X, W, offset, scale, arg_bound, out, i0, i1):
    wide_vectors()
    gemm(X[i0:i1], W, out[i0:i1], False, False, 0.0)
    for i in range(i0, i1):
        cos_row_typed(out[i], offset, scale, arg_bound[i])


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def gemm_cos_offset(X, W, offset, scale, arg_bound, out):
    """out = scale * cos(X @ W + offset); the ``rff`` map, fused by row blocks."""
    n = X.shape[0]
    for b in prange((n + GEMM_BLOCK - 1) // GEMM_BLOCK):
        _cos_block(X, W, offset, scale, arg_bound, out, b * GEMM_BLOCK,
                   min(n, (b + 1) * GEMM_BLOCK))


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _sincos_block(X, W, scale, arg_bound, out, i0, i1):
    wide_vectors()
    m = W.shape[1]
    args = np.empty((i1 - i0, m), dtype=X.dtype)
    gemm(X[i0:i1], W, args, False, False, 0.0)
    for i in range(i0, i1):
        sincos_to_typed(args[i - i0], m, scale, arg_bound[i], out[i])


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def gemm_sincos(X, W, scale, arg_bound, out):
    """out = scale * [cos(X @ W), sin(X @ W)]; the pair map, fused by row blocks."""
    n = X.shape[0]
    for b in prange((n + GEMM_BLOCK - 1) // GEMM_BLOCK):
        _sincos_block(X, W, scale, arg_bound, out, b * GEMM_BLOCK,
                      min(n, (b + 1) * GEMM_BLOCK))


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def cos_offset_scale_inplace(Z, offset, scale, arg_bound):
    """Z[i, j] <- scale * cos(Z[i, j] + offset[j]); Z (n, D) holds X @ W.

    The ``rff`` map (Rahimi & Recht Algorithm 1): z(x) = sqrt(2/D) cos(W x + b).
    ``arg_bound[i]`` bounds |argument| on row i (see ``trig_arg_bound``); rows
    above ``FAST_TRIG_MAX`` use libm.  float32 rows are computed in float32
    (float64 above ``FAST_TRIG_MAX_F32``).
    """
    for i in prange(Z.shape[0]):
        cos_row_typed(Z[i], offset, scale, arg_bound[i])


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def sincos_pairs_inplace(Z, m, scale, arg_bound):
    """Z[:, :m] holds X @ W; overwrite with scale*[cos(XW), sin(XW)] (D = 2m).

    The ``rff_pairs`` map: z(x) = sqrt(2/D) [cos(W x), sin(W x)].  The row is its
    own argument array: each argument is read before its slot is written.
    """
    for i in prange(Z.shape[0]):
        sincos_to_typed(Z[i], m, scale, arg_bound[i], Z[i])


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def scale_inplace(Z, scale):
    """Z *= scale: one streaming pass, the reference cost of touching the output."""
    n, m = Z.shape
    for i in prange(n):
        for j in range(m):
            Z[i, j] = scale * Z[i, j]


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def fill_inplace(Z, value):
    """Z[...] = value: a store-only parallel pass, the machine's write bandwidth that an
    output's limit is counted in (rffbench.measure.speed)."""
    n, m = Z.shape
    v = Z.dtype.type(value)
    for i in prange(n):
        for j in range(m):
            Z[i, j] = v


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def cos_rows_repeat(Z, offset, arg_bound, reps):
    """``reps`` passes of Z[i] <- cos(Z[i] + offset) over each row in turn, a row's passes
    one after the other while it stays in L1, in one parallel loop: the in-cache rate of the
    maps' own cosine (cos_row_typed) that a limit counts (rffbench.measure.limits), with no
    parallel start per pass."""
    for i in prange(Z.shape[0]):
        for _ in range(reps):
            cos_row_typed(Z[i], offset, 1.0, arg_bound[i])


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def exp_rows_repeat(Z, reps):
    """``reps`` passes of Z[i, j] <- -exp(Z[i, j]) (Z <= 0 stays in [-1, 0)) over each row
    in turn, in one parallel loop: the in-cache rate of the Grams' exp (exp_typed)."""
    n, m = Z.shape
    for i in prange(n):
        for _ in range(reps):
            for j in range(m):
                Z[i, j] = -exp_typed(Z[i, j])


#: activations of Gaussian directions (activation_inplace): the arc-cosine kernels' step and
#: ReLU (orders 0 and 1), and the identity of the linear kernel's random projections
ACT_STEP, ACT_RELU, ACT_IDENTITY = 0, 1, 2
#: the step's zero_below: |w.x| at most this fraction of its per-row bound counts as 0
#: (2^-20: above float32 rounding of a sum that cancels, far below any projection that
#: does not)
ZERO_TOL = 2.0**-20


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def activation_inplace(Z, code, scale, zero_below):
    """Z <- scale * step(Z) (ACT_STEP), scale * max(Z, 0) (ACT_RELU) or scale * Z
    (ACT_IDENTITY).  step(0) = 1/2: the midpoint, so that step(t) + step(-t) = 1 for every
    t (it matters only for directions with atoms, e.g. a Gauss-Hermite grid, where w.x = 0
    has positive probability); |Z[i, j]| <= zero_below[i] counts as 0 (zero_below empty:
    none)."""
    n, m = Z.shape
    tol = zero_below.shape[0] > 0
    for i in prange(n):
        row = Z[i]
        if code == ACT_STEP:
            lim = zero_below[i] if tol else 0.0
            for j in range(m):
                v = row[j]
                row[j] = 0.5 * scale if abs(v) <= lim else (scale if v > 0 else 0.0)
        elif code == ACT_RELU:
            for j in range(m):
                row[j] = scale * row[j] if row[j] > 0 else 0.0
        else:
            for j in range(m):
                row[j] = scale * row[j]


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def positive_features_inplace(Z, shift, scale):
    """Z[i, j] <- scale * exp(Z[i, j] - shift[i]) (positive random features; the argument
    can be positive: fast_exp_full_scalar, vectorised)."""
    n, m = Z.shape
    for i in prange(n):
        row = Z[i]
        s = np.float64(shift[i])
        for j in range(m):
            row[j] = scale * fast_exp_full_scalar(np.float64(row[j]) - s)


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def group_products(P, start, count, weight, out):
    """out[i, f] = weight[f] * prod_{j < count[f]} P[i, start[f] + j] (Random Maclaurin:
    a product of count[f] Rademacher projections; count 0 gives the constant weight)."""
    n = P.shape[0]
    D = out.shape[1]
    for i in prange(n):
        for f in range(D):
            v = np.float64(weight[f])
            s = start[f]
            for j in range(count[f]):
                v *= P[i, s + j]
            out[i, f] = v


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def count_sketches(X, hashes, signs, out):
    """out[t, i, :] = count sketch t of row i: out[t, i, hashes[t, k]] += signs[t, k] X[i, k]."""
    T, n, D = out.shape
    d = X.shape[1]
    for i in prange(n):
        for t in range(T):
            row = out[t, i]
            for j in range(D):
                row[j] = 0.0
            for k in range(d):
                row[hashes[t, k]] += signs[t, k] * X[i, k]


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def scale_columns_inplace(Z, s):
    """Z[i, j] *= s[j] (per-feature weights, e.g. quadrature weights)."""
    n, m = Z.shape
    for i in prange(n):
        row = Z[i]
        for j in range(m):
            row[j] = row[j] * s[j]


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def elementary_symmetric(X, R, p, scale, out):
    """out[i, f] = scale * e_p(R[f] * x_i), e_p the elementary symmetric polynomial of degree
    p (random features of the ANOVA kernel: E e_p(r * x) e_p(r * y) = e_p(x * y) for
    Rademacher r), by the recursion e_t <- e_t + r_k x_k e_(t-1) over the coordinates."""
    n, d = X.shape
    D = out.shape[1]
    for i in prange(n):
        e = np.empty(p + 1)
        for f in range(D):
            e[0] = 1.0
            for t in range(1, p + 1):
                e[t] = 0.0
            for k in range(d):
                v = np.float64(R[f, k]) * X[i, k]
                for t in range(min(k + 1, p), 0, -1):
                    e[t] += v * e[t - 1]
            out[i, f] = scale * e[p]
