"""Exact Gram matrices and kernel-times-matrix products, compiled per kernel.

A Gram matrix is a distance-like quantity s(x, y) followed by a profile f(s).  How s
is made (``tile``: from a GEMM of the rows, or the exact coordinate loop, ``kind``)
and which f (``profile``) are integer codes that every public function takes; each
function compiles once per combination of codes, with only that combination's code
in it: the public functions hand the codes, as compile-time constants (``literally``), to
a chunk function (a block of rows, a row tile, a run of tile pairs), which passes them on to
helpers that are overloads picking their one branch while numba types them.  The chunks of
the per-kernel functions (products, tiled and coordinate Grams) run on Python threads
(:mod:`~rffbench._numba.threads`, which keeps each chunk function's compiled version per
codes and types: ``literally`` at the Python boundary would make every call try a
compilation first, which the timings would see); the profile passes over a GEMM's output,
one code each and called on small blocks, keep a parallel loop per profile.  A generic
kernel that holds every branch compiled all of them for whichever one a run used:
12.8 s on a fresh install for the exact KRR prediction of the default run, now about
1 s.  A parallel loop (``prange``) per kernel around the chunk function, as there was, cost
a compile of its own for every kernel code and dtype (a fifth of a cold test-suite's
compile time) for three lines of loop.  Each function that holds a hot loop calls
``wide_vectors()`` (512-bit vectors on AVX-512 CPUs: the products' tiles 18-25% faster),
and the squared distance and its profile are one loop (the distance never leaves a register).

Each public function has a plain-numpy reference in the test-suite
(``tests/_numba/test_gram.py``).
"""
from __future__ import annotations

import functools
import math

import numba as nb
import numpy as np
from numba import literally, prange, types
from numba.extending import overload

from .elementwise import (
    EXP_MIN_ARG,
    FMA,
    INV_PI,
    exp_typed,
    fast_acos_scalar,
    fast_exp_bounded_scalar,
    fast_exp_scalar,
    fast_exp_upper_scalar,
    like_precision,
    wide_vectors,
)
from .threads import map_chunks, row_chunks

# --------------------------------------------------------------------------
# the codes
# --------------------------------------------------------------------------
#: profiles of a distance s (squared Euclidean or L1)
PROFILE_NONE = 0  # k = s
PROFILE_EXP = 1  # k = exp(-a s)                      gaussian (s=d^2), laplacian (s=L1)
PROFILE_EXP_SQRT = 2  # k = exp(-a sqrt(s))          matern 0.5 (s = d^2, a = 1/l)
PROFILE_MATERN15 = 3  # t = a sqrt(s): (1+t) exp(-t)           a = sqrt(3)/l
PROFILE_MATERN25 = 4  # t = a sqrt(s): (1+t+t^2/3) exp(-t)     a = sqrt(5)/l
#: beyond this t, exp(-t) is 0 in float64 and the Matern polynomial must not reach inf
MATERN_T_MAX = 800.0

#: coordinate_gram's kernels: how a coordinate's term enters out[i, j] (a new kind: its
#: name here, its constant below and its branch in _ov_coordinate_row; rffbench._numba
#: re-exports every name of CODES)
COORDINATE_KINDS = ("SQDIST", "L1DIST", "CAUCHY", "ADDITIVE_CHI2", "SECH", "INTERSECTION")
SQDIST, L1DIST, CAUCHY, ADDITIVE_CHI2, SECH, INTERSECTION = range(len(COORDINATE_KINDS))

#: dot-product kernels (not shift-invariant): profiles of x.y, |x|, |y|
DOT_ARCCOS0 = 0  # k = 1 - theta / pi                                   (0 if x or y = 0)
DOT_ARCCOS1 = 1  # k = |x||y| (sin theta + (pi - theta) cos theta) / pi
DOT_POLY = 2  # k = (a x.y + b)^p                                  (p = 1: linear)
DOT_EXP = 3  # k = exp(a x.y)                                  exponential dot product

#: how a tile's kernel values are made: a GEMM of the tile then the squared-distance
#: profile; a GEMM then the dot-product profile (arc-cosine, polynomial); the
#: coordinate loop (exact distances, L1, Cauchy, chi2, sech)
TILE_SQDIST, TILE_DOT, TILE_COORD = 0, 1, 2
#: every code of this module by name: the tiles, the coordinate kinds, the distance and
#: dot-product profiles (the package re-exports them all, so a new code is one module's)
CODES = ("TILE_SQDIST", "TILE_DOT", "TILE_COORD", *COORDINATE_KINDS,
         *sorted(n for n in dir() if n.startswith(("PROFILE_", "DOT_"))))
#: rows (and columns) of one tile of the kernel products: a float64 tile is 512 KiB,
#: within one core's L2 (1.25 MiB here) with its rows of X and Y
KERNEL_TILE = 256


def literal_code(v):
    """The value of an integer code that numba typed as a literal, or None."""
    return v.literal_value if isinstance(v, types.IntegerLiteral) else None


# --------------------------------------------------------------------------
# one row of kernel values, one branch per code (overloads on literal codes)
# --------------------------------------------------------------------------
@nb.njit(cache=True)
def profile_scale(profile, a):
    """c such that the profile is a function of u = -c s alone (``neg_profile_value``):
    a for exp(-a s), a^2 for the profiles of a sqrt(s) (Matern).  Compiled, so that
    ``profile_value`` and ``sqdist_gemm_rows`` share the one rule."""
    return a if profile == PROFILE_EXP else a * a


def neg_profile_value(u, profile):
    """f as a function of u = -c s <= 0 (c = ``profile_scale``), in the precision of u:
    exp(u), or with t = sqrt(-u) = a sqrt(s): exp(-t), (1 + t) exp(-t), (1 + t + t^2 / 3)
    exp(-t).  u is what a GEMM of the scaled rows gives directly (``sqdist_gemm_rows``)."""


@overload(neg_profile_value, inline="always", prefer_literal=True)
def _ov_neg_profile_value(u, profile):
    code = literal_code(profile)
    if code is None:
        return None
    if code == PROFILE_EXP:
        def impl(u, profile):
            return exp_typed(u)
    elif code == PROFILE_EXP_SQRT:
        def impl(u, profile):
            return exp_typed(-np.sqrt(-u))
    elif code == PROFILE_MATERN15:  # t capped where exp(-t) is 0: no inf * 0
        def impl(u, profile):
            t = min(np.sqrt(-u), like_precision(u, MATERN_T_MAX))
            return (like_precision(u, 1.0) + t) * exp_typed(-t)
    elif code == PROFILE_MATERN25:
        def impl(u, profile):
            t = min(np.sqrt(-u), like_precision(u, MATERN_T_MAX))
            return (like_precision(u, 1.0) + t + t * t / like_precision(u, 3.0)) * exp_typed(-t)
    else:
        raise nb.core.errors.TypingError(f"unknown profile code {code}")
    return impl


def profile_value(s, profile, a):
    """f(s) for the profile code, in the precision of s (float32: float32 exp, 16 lanes):
    s itself (PROFILE_NONE), else ``neg_profile_value(-c s)``."""


@overload(profile_value, inline="always", prefer_literal=True)
def _ov_profile_value(s, profile, a):
    code = literal_code(profile)
    if code is None:
        return None
    if code == PROFILE_NONE:
        return lambda s, profile, a: s
    return lambda s, profile, a: neg_profile_value(
        like_precision(s, -profile_scale(profile, a)) * s,
                                                   profile)


@nb.njit(inline="always")
def profile_row(row, profile, a):
    """row <- f(row) in the row's precision."""
    for j in range(row.shape[0]):
        row[j] = profile_value(row[j], profile, a)


#: how the coordinate loop's two-row helpers are compiled (coordinate_rows2,
#: finish_min_sum): each a function of its own per (kind, profile, dtype), called, not
#: inlined.  numba compiles an inline overload's body once on its own (to type it) and
#: again inlined in each caller, so nested inline helpers compiled their loops 3-4 times:
#: the coordinate Grams of 7 kernel/profile pairs in both dtypes took 115 s cold, now 68
#: (the kernels' Gram and K v, 9 kernels x 2 dtypes: 121 s -> 86 s).  coordinate_row
#: stays inlined: called, the Cauchy kernel's K v was 10-25% slower (44 s cold; the
#: others as fast).  Plain inline functions with a branch per kind instead (numba types
#: every branch, LLVM folds the dead ones): 505 s.  A call per pair of rows costs nothing
#: beside its 2 x m x d loop.
NOT_INLINED = dict(fastmath=FMA, error_model="numpy", nogil=True)


@nb.njit(inline="always")
def _min2(u, v):
    return min(u, v)


@nb.njit(inline="always", fastmath=FMA)
def coordinate_sum2(xa, xb, Yt, j0, ra, rb, term):
    """ra[j] <- sum_k term(xa_k, y_{j0 + j, k}) and rb[j] likewise for xb (Yt = Y.T; ra
    and rb distinct rows).  Four coordinates per pass over the rows: their terms are
    summed in registers, so a row is loaded and stored once per four coordinates (one at
    a time, the loop was bound by those loads and stores: the L1 distance at d = 16 1.7x
    slower); two rows at once, so each load of y serves both (register blocking) and the
    loop is bound by its arithmetic (a sum of minima at d = 16: 1.11 -> 0.91 ns per pair,
    one thread, the rate of min and add in registers)."""
    m = ra.shape[0]
    d = xa.shape[0]
    d4 = d - d % 4
    for k in range(0, d4, 4):
        a0, a1, a2, a3 = xa[k], xa[k + 1], xa[k + 2], xa[k + 3]
        b0, b1, b2, b3 = xb[k], xb[k + 1], xb[k + 2], xb[k + 3]
        y0 = Yt[k, j0:j0 + m]
        y1 = Yt[k + 1, j0:j0 + m]
        y2 = Yt[k + 2, j0:j0 + m]
        y3 = Yt[k + 3, j0:j0 + m]
        if k == 0:
            for j in range(m):
                u0, u1, u2, u3 = y0[j], y1[j], y2[j], y3[j]
                ra[j] = (term(a0, u0) + term(a1, u1)) + (term(a2, u2) + term(a3, u3))
                rb[j] = (term(b0, u0) + term(b1, u1)) + (term(b2, u2) + term(b3, u3))
        else:
            for j in range(m):
                u0, u1, u2, u3 = y0[j], y1[j], y2[j], y3[j]
                ra[j] += (term(a0, u0) + term(a1, u1)) + (term(a2, u2) + term(a3, u3))
                rb[j] += (term(b0, u0) + term(b1, u1)) + (term(b2, u2) + term(b3, u3))
    if d4 == 0:
        for j in range(m):
            ra[j] = 0.0
            rb[j] = 0.0
    for k in range(d4, d):
        ak = xa[k]
        bk = xb[k]
        yk = Yt[k, j0:j0 + m]
        for j in range(m):
            ra[j] += term(ak, yk[j])
            rb[j] += term(bk, yk[j])


def coordinate_rows2(X, r, Yt, j0, G, g, kind, profile, a, xs, ys):
    """G[g], G[g + 1] <- the kernel rows of X[r], X[r + 1] (``coordinate_row``; xs, ys as
    there): the sums of minima (L1DIST, INTERSECTION) two rows at a time
    (``coordinate_sum2``), the other kinds one row at a time."""


@overload(coordinate_rows2, prefer_literal=True, jit_options=NOT_INLINED)
def _ov_coordinate_rows2(X, r, Yt, j0, G, g, kind, profile, a, xs, ys):
    code = literal_code(kind)
    if code is None or literal_code(profile) is None:
        return None
    if code not in (L1DIST, INTERSECTION):
        def impl(X, r, Yt, j0, G, g, kind, profile, a, xs, ys):
            wide_vectors()
            for q in range(2):  # one inlined copy (two trip numba's inliner on scopes)
                coordinate_row(X[r + q], Yt, j0, G[g + q], kind, profile, a, xs[r + q], ys)
        return impl

    def impl(X, r, Yt, j0, G, g, kind, profile, a, xs, ys):
        wide_vectors()
        coordinate_sum2(X[r], X[r + 1], Yt, j0, G[g], G[g + 1], _min2)
        finish_min_sum(G[g], kind, profile, a, xs[r], ys, j0)
        finish_min_sum(G[g + 1], kind, profile, a, xs[r + 1], ys, j0)
    return impl


def finish_min_sum(row, kind, profile, a, xs, ys, j0):
    """row holds sum_k min(x_k, y_k): the kernel value (L1DIST: f(sum x + sum y - 2 row),
    INTERSECTION: a row)."""


@overload(finish_min_sum, prefer_literal=True, jit_options=NOT_INLINED)
def _ov_finish_min_sum(row, kind, profile, a, xs, ys, j0):
    code = literal_code(kind)
    if code is None or literal_code(profile) is None:
        return None
    if code == L1DIST:
        def impl(row, kind, profile, a, xs, ys, j0):
            wide_vectors()
            two = like_precision(row, 2.0)
            zero = like_precision(row, 0.0)
            yt = ys[j0:j0 + row.shape[0]]  # ys[j0 + j] would be a gather (j0 + j may wrap)
            for j in range(row.shape[0]):  # >= 0 up to rounding
                row[j] = profile_value(max(xs + yt[j] - two * row[j], zero), profile, a)
        return impl
    if code == INTERSECTION:
        def impl(row, kind, profile, a, xs, ys, j0):
            wide_vectors()
            for j in range(row.shape[0]):
                row[j] *= a
        return impl
    raise nb.core.errors.TypingError(f"not a sum of minima: kind {code}")


def coordinate_row(x, Yt, j0, row, kind, profile, a, xs, ys):
    """row[j] <- k(x, y_{j0 + j}) accumulated coordinate by coordinate, the inner loop
    over j (vectorised).  Yt = Y.T (d, m), C-contiguous; xs, ys: the rows' coordinate
    sums for L1DIST (``coordinate_aux``), else unused.  Exact (no cancellation) but for
    L1DIST: |u - v| = u + v - 2 min(u, v), so ||x - y||_1 = sum x + sum y - 2 sum_k
    min(x_k, y_k), two vector operations per coordinate (min, add) instead of three
    (subtract, abs, add): the L1 loop 1.5x faster, at a cancellation of ~1e-16 (|sum x| +
    |sum y|), as |x|^2 + |y|^2 - 2 x.y for the squared distance through a GEMM."""


@overload(coordinate_row, inline="always", prefer_literal=True)
def _ov_coordinate_row(x, Yt, j0, row, kind, profile, a, xs, ys):
    code = literal_code(kind)
    if code is None or literal_code(profile) is None:
        return None
    if code == SQDIST:
        def impl(x, Yt, j0, row, kind, profile, a, xs, ys):
            m = row.shape[0]
            for j in range(m):
                row[j] = 0.0
            for k in range(x.shape[0]):
                xk = x[k]
                yk = Yt[k, j0:j0 + m]
                for j in range(m):
                    t = xk - yk[j]
                    row[j] += t * t
            profile_row(row, profile, a)
    elif code in (L1DIST, INTERSECTION):  # sums of minima (INTERSECTION: a = 1/l)
        def impl(x, Yt, j0, row, kind, profile, a, xs, ys):  # one row (a Gram's odd last)
            coordinate_sum2(x, x, Yt, j0, row, np.empty_like(row), _min2)
            finish_min_sum(row, kind, profile, a, xs, ys, j0)
    elif code == CAUCHY:
        def impl(x, Yt, j0, row, kind, profile, a, xs, ys):
            m = row.shape[0]
            for j in range(m):
                row[j] = 1.0
            for k in range(x.shape[0]):
                xk = x[k]
                yk = Yt[k, j0:j0 + m]
                for j in range(m):
                    t = xk - yk[j]
                    row[j] = row[j] / (1.0 + t * t * a)
    elif code == ADDITIVE_CHI2:
        def impl(x, Yt, j0, row, kind, profile, a, xs, ys):
            m = row.shape[0]
            for j in range(m):
                row[j] = 0.0
            for k in range(x.shape[0]):
                x64 = np.float64(x[k])
                yk = Yt[k, j0:j0 + m]
                for j in range(m):
                    s = x64 + yk[j]
                    if s > 0.0:
                        row[j] += 2.0 * x64 * yk[j] / s
            for j in range(m):
                row[j] *= a
    elif code == SECH:  # sech t = 2 e^-|t| / (1 + e^-2|t|): one vectorised exp, no overflow
        def impl(x, Yt, j0, row, kind, profile, a, xs, ys):
            m = row.shape[0]
            for j in range(m):
                row[j] = 1.0
            for k in range(x.shape[0]):
                x64 = np.float64(x[k])
                yk = Yt[k, j0:j0 + m]
                for j in range(m):
                    e = fast_exp_scalar(-abs(a * (x64 - yk[j])))
                    row[j] = row[j] * (2.0 * e / (1.0 + e * e))
    else:
        raise nb.core.errors.TypingError(f"unknown coordinate kind {code}")
    return impl


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def sqdist_profile_row(row, xsq, ysq, profile, a):
    """row holds x.y for one x; overwrite with f(max(|x|^2 + |y|^2 - 2 x.y, 0))."""
    wide_vectors()
    two = like_precision(row, 2.0)
    zero = like_precision(row, 0.0)
    for j in range(row.shape[0]):  # one loop: the distance stays in a register for f
        row[j] = profile_value(max(xsq + ysq[j] - two * row[j], zero), profile, a)


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def sqdist_pair_value(u, profile):
    """f(u) for u = -c |x - y|^2 from the GEMM (u > 0 only by rounding: 0)."""
    literally(profile)
    return neg_profile_value(min(u, like_precision(u, 0.0)), profile)


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def scaled_sqdist_row(g, k, profile):
    """g holds u = -c |x - y|^2 for one x (a GEMM of ``sqdist_gemm_rows``): k <- f(u)
    (float64), g <- 0 (ready for the next tile's accumulating GEMM).  One load, the
    profile and two stores per pair."""
    wide_vectors()
    literally(profile)
    zero = like_precision(g, 0.0)
    for j in range(g.shape[0]):
        k[j] = sqdist_pair_value(g[j], profile)
        g[j] = zero


def sqdist_gemm_rows(X, profile, a):
    """(L, R), X's rows augmented so that the GEMM L R^T is -c |x_i - y_j|^2 itself
    (c = ``profile_scale``): L = [2c x, -c |x|^2, -c], R = [x, 1, |x|^2] (squared norms in
    float64, then X's precision).  The tile's values then need no per-pair norms, no
    distance arithmetic and no scaling: the exact products' Gaussian and Matern tiles
    8% faster.  Rounding: the GEMM sums d + 2 terms of magnitude up to c (|x|^2 + |y|^2),
    the same cancellation as |x|^2 + |y|^2 - 2 x.y."""
    c = profile_scale(profile, a)
    sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    n, d = X.shape
    L, R = np.empty((n, d + 2), X.dtype), np.empty((n, d + 2), X.dtype)
    np.multiply(2.0 * c, X, out=L[:, :d], casting="unsafe")  # filled in place: np.hstack
    L[:, d], L[:, d + 1] = -c * sq, -c                       # took 2.9 ms of 3 at 5,120 x 66
    R[:, :d], R[:, d], R[:, d + 1] = X, 1.0, sq
    return L, R


def row_norms(X):
    """(norms, U): the Euclidean norms of X's rows in float64 and the unit rows x / |x|
    (float64; a zero row stays zero).  Each row is divided by its largest |x_k| before it
    is squared: no square underflows or overflows, so a norm is 0 only for a zero row (a
    row of 1e-162 has norm 1e-162, not the 2.2e-162 of its subnormal square's root)."""
    X64 = np.asarray(X, dtype=np.float64)
    s = np.max(np.abs(X64), axis=1, initial=0.0)[:, None]
    S = np.divide(X64, s, out=np.zeros_like(X64), where=s > 0)
    sn = np.sqrt(np.einsum("ij,ij->i", S, S))[:, None]
    return (s * sn)[:, 0], np.divide(S, sn, out=S, where=sn > 0)


def dot_gemm_rows(X, profile, a):
    """(L, R), X's rows scaled so that the GEMM L R^T is the dot-product profile's
    argument u itself: a x.y (L = a x, R = x) for the polynomial and exponential
    profiles, cos(x, y) (L = R = x / |x|, 0 for a zero row: ``row_norms``, exact for
    rows too small or too large to square) for the arc-cosine ones (no division per
    pair).  Rows returned in X's precision."""
    if profile in (DOT_ARCCOS0, DOT_ARCCOS1):
        U = row_norms(X)[1].astype(X.dtype)
        return U, U
    return (a * np.asarray(X, dtype=np.float64)).astype(X.dtype), X


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def scaled_dot_row(g, k, xn, yn, ym, profile, b, p):
    """g holds u for one x (a GEMM of ``dot_gemm_rows``; xn, yn: norms / l, ym: the
    largest of yn): k <- the kernel value ((u + b)^p, exp(u) or the arc-cosine kernel of
    c = u; float64), g <- 0 in the same loop (ready for the next tile's accumulating
    GEMM)."""
    wide_vectors()
    literally(profile)
    dot_row_values(g, k, xn, yn, ym, profile, b, p, True)


@nb.njit(inline="always", cache=True, error_model="numpy")
def exp_dot_bounded(xn, ym):
    """Whether a row of exponential dot-product arguments, |u| <= xn ym, stays where the
    exp needs no select (|u| <= 708: 2**k a normal number; fast_exp_bounded_scalar)."""
    return np.float64(xn) * np.float64(ym) <= -EXP_MIN_ARG


def dot_row_values(g, k, xn, yn, ym, profile, b, p, clear):
    """k <- the values of the row of arguments g; ``clear`` (a constant): g <- 0 as each
    is read (k is then not g), else k may be g (inlined where the caller has the
    literal code); ym >= every yn (the exp profile's bound |u| <= xn ym)."""


def _put(k, g, j, v, clear):
    """k[j] <- v, and g[j] <- 0 when ``clear`` (a literal: no code when False)."""


@overload(_put, inline="always", prefer_literal=True)
def _ov_put(k, g, j, v, clear):
    if not isinstance(clear, types.BooleanLiteral):
        return None
    if clear.literal_value:
        def impl(k, g, j, v, clear):
            k[j] = v
            g[j] = 0.0
    else:
        def impl(k, g, j, v, clear):
            k[j] = v
    return impl


@overload(dot_row_values, inline="always", prefer_literal=True)
def _ov_dot_row_values(g, k, xn, yn, ym, profile, b, p, clear):
    code = literal_code(profile)
    if code is None or not isinstance(clear, types.BooleanLiteral):
        return None
    if code == DOT_POLY:
        def impl(g, k, xn, yn, ym, profile, b, p, clear):
            m = g.shape[0]
            if p == 1.0:  # the linear kernel
                for j in range(m):
                    _put(k, g, j, np.float64(g[j]) + b, clear)
            elif p == 2.0:  # the default degree, and 3 and 4, by multiplications (vectorised)
                for j in range(m):
                    t = np.float64(g[j]) + b
                    _put(k, g, j, t * t, clear)
            elif p == 3.0:
                for j in range(m):
                    t = np.float64(g[j]) + b
                    _put(k, g, j, t * t * t, clear)
            elif p == 4.0:
                for j in range(m):
                    t = np.float64(g[j]) + b
                    t = t * t
                    _put(k, g, j, t * t, clear)
            else:
                for j in range(m):
                    _put(k, g, j, (np.float64(g[j]) + b) ** p, clear)
        return impl
    if code == DOT_EXP:  # the argument can be positive: exp up to its overflow
        def impl(g, k, xn, yn, ym, profile, b, p, clear):
            if exp_dot_bounded(xn, ym):  # |u| <= |x| |y| / l^2: no select (17 vector
                for j in range(g.shape[0]):  # operations per 8 values, not 25)
                    _put(k, g, j, fast_exp_bounded_scalar(np.float64(g[j])), clear)
            else:
                for j in range(g.shape[0]):
                    _put(k, g, j, fast_exp_upper_scalar(np.float64(g[j])), clear)
        return impl
    if code not in (DOT_ARCCOS0, DOT_ARCCOS1):
        raise nb.core.errors.TypingError(f"unknown dot-product profile {code}")
    order0 = code == DOT_ARCCOS0

    def impl(g, k, xn, yn, ym, profile, b, p, clear):
        for j in range(g.shape[0]):  # branch-free (selects): the loop vectorises
            c = min(1.0, max(-1.0, np.float64(g[j])))
            theta = fast_acos_scalar(c)
            if order0:
                v = 1.0 - theta * INV_PI
            else:
                v = xn * yn[j] * (np.sqrt(max(0.0, 1.0 - c * c)) + (math.pi - theta) * c) \
                    * INV_PI
            _put(k, g, j, 0.0 if (xn == 0.0) | (yn[j] == 0.0) else v, clear)  # x or y is 0
    return impl


# --------------------------------------------------------------------------
# Gram matrices of the rows (X @ Y.T done by the caller's BLAS, or the coordinate loop)
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _coordinate_rows(X, Yt, out, xs, ys, i0, i1, kind, profile, a):
    wide_vectors()
    literally(kind)
    literally(profile)
    i = i0
    while i + 1 < i1:
        coordinate_rows2(X, i, Yt, 0, out, i, kind, profile, a, xs, ys)
        i += 2
    if i < i1:
        coordinate_row(X[i], Yt, 0, out[i], kind, profile, a, xs[i], ys)


#: rows per parallel iteration of the profile passes over a GEMM's output (one profile code:
#: a parallel loop each, cheap to compile and to start for the Gram's small blocks)
ROWS_PER_TASK = 16


def coordinate_aux(X, kind, dtype=None):
    """The per-row numbers ``coordinate_row`` takes for ``kind``: the coordinate sums
    (float64, then ``dtype``, default X's) for L1DIST, else zeros.  X: rows (n, d)."""
    dtype = X.dtype if dtype is None else dtype
    if kind == L1DIST:
        return np.asarray(X, dtype=np.float64).sum(axis=1).astype(dtype)
    return np.zeros(X.shape[0], dtype=dtype)


def coordinate_gram(X, Yt, out, kind, profile, a):
    """A Gram accumulated coordinate by coordinate (``coordinate_row``), a block of output
    rows per parallel iteration: exact (no cancellation; L1DIST: see ``coordinate_row``),
    best for small d.  Yt = Y.T (d, m) C-contiguous.  ``kind``:

    * SQDIST: f(||x - y||^2), f = the ``profile`` with parameter ``a``;
    * L1DIST: f(||x - y||_1);
    * CAUCHY: prod_k 1 / (1 + (x_k - y_k)^2 a);
    * ADDITIVE_CHI2: a sum_k 2 x_k y_k / (x_k + y_k) (a term is 0 where x_k + y_k = 0);
    * SECH: prod_k 1 / cosh(a (x_k - y_k)) (skewed chi2 in log coordinates);
    * INTERSECTION: a sum_k min(x_k, y_k).
    """
    bounds = row_chunks(X.shape[0], out.shape[1] * max(X.shape[1], 1), nb.get_num_threads())
    xs, ys = coordinate_aux(X, kind), coordinate_aux(Yt.T, kind, X.dtype)
    codes = (int(kind), int(profile))
    map_chunks(_coordinate_rows, len(bounds) - 1, lambda c: (
        X, Yt, out, xs, ys, bounds[c], bounds[c + 1], *codes, a), literal=(7, 8))


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _sqdist_rows(G, xsq, ysq, i0, i1, profile, a):
    wide_vectors()
    literally(profile)
    for i in range(i0, i1):
        sqdist_profile_row(G[i], xsq[i], ysq, profile, a)


@functools.lru_cache(maxsize=None)
def _sqdist_for(profile):
    @nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
    def sqdist_from_gemm_of(G, xsq, ysq, a):
        n = G.shape[0]
        for b in prange((n + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
            _sqdist_rows(G, xsq, ysq, b * ROWS_PER_TASK, min(n, (b + 1) * ROWS_PER_TASK),
                         profile, a)
    return sqdist_from_gemm_of


def sqdist_from_gemm_profile(G, xsq, ysq, profile, a):
    """G holds X @ Y.T; overwrite with f(max(|x|^2 + |y|^2 - 2 x.y, 0))."""
    _sqdist_for(int(profile))(G, xsq, ysq, a)


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _dot_rows(G, xn, yn, ym, i0, i1, profile, b, p):
    wide_vectors()
    literally(profile)
    for i in range(i0, i1):
        dot_row_values(G[i], G[i], xn[i], yn, ym, profile, b, p, False)


@functools.lru_cache(maxsize=None)
def _dot_for(profile):
    @nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
    def dot_profile_of(G, xn, yn, ym, b, p):
        n = G.shape[0]
        for t in prange((n + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
            _dot_rows(G, xn, yn, ym, t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK), profile,
                      b, p)
    return dot_profile_of


def dot_profile_inplace(G, xn, yn, profile, b, p):
    """G holds L R^T for the rows of ``dot_gemm_rows`` (the profile's argument u);
    overwrite with the kernel value.  xn, yn: the norms of X / l and Y / l (the
    arc-cosine kernels' |x| |y|)."""
    _dot_for(int(profile))(G, xn, yn, float(np.max(yn, initial=0.0)), b, p)


# --------------------------------------------------------------------------
# the ANOVA kernel: an elementary symmetric polynomial of the coordinates' products
# --------------------------------------------------------------------------
@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def anova_gram(X, Yt, p, a, out):
    """out[i, j] = a * e_p(x_i * y_j), e_p the elementary symmetric polynomial of degree p
    of the coordinate products x_ik y_jk (sum over the k_1 < ... < k_p of their product),
    by the recursion e_t <- e_t + x_k y_k e_(t-1) over the coordinates k, the inner loop
    over the columns j (vectorised); Yt = Y.T (d, m), C-contiguous; float64 accumulators."""
    n, d = X.shape
    m = Yt.shape[1]
    for i in prange(n):
        E = np.zeros((p + 1, m))
        for j in range(m):
            E[0, j] = 1.0
        for k in range(d):
            xk = np.float64(X[i, k])
            if xk == 0.0:
                continue
            yk = Yt[k]
            for t in range(min(k + 1, p), 0, -1):
                lo = E[t - 1]
                hi = E[t]
                for j in range(m):
                    hi[j] += xk * yk[j] * lo[j]
        for j in range(m):
            out[i, j] = a * E[p, j]
