"""Kernel-times-matrix products and Gram matrices by tiles, compiled per kernel: each
thread makes a tile of K in its cache from the row values of :mod:`~rffbench._numba.gram`
(same codes, same ``literally`` dispatch), folds it into the outputs and moves on; and the
intersection kernel's products through its sorted coordinates.

Each public function has a plain-numpy reference in the test-suite
(``tests/_numba/test_products.py``).
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba import literally, prange, types
from numba.extending import overload

from .blas import gemm
from .elementwise import FMA, fast_exp_bounded_scalar, fast_exp_upper_scalar, wide_vectors
from .gram import (
    DOT_EXP,
    KERNEL_TILE,
    TILE_COORD,
    TILE_DOT,
    TILE_SQDIST,
    coordinate_rows2,
    exp_dot_bounded,
    literal_code,
    scaled_dot_row,
    scaled_sqdist_row,
    sqdist_pair_value,
)
from .threads import map_chunks


# --------------------------------------------------------------------------
# kernel-times-matrix products: K(X, Y) V with K never in memory
# --------------------------------------------------------------------------
# One T x T tile of K at a time, per thread, in its cache: the profile's argument by a
# single-threaded BLAS GEMM of the prepared rows (the caller limits BLAS to one thread)
# or the kernel by the exact coordinate loop, the profile into a float64 tile, then
# multiplied into the output while the tile is in cache (one column: one pass over the
# tile, tile_times_vector; more: two GEMMs).  Rows are padded to a multiple of T
# (padding rows of V are 0, padded outputs are dropped).
def kernel_tile(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p):
    """K <- K(X[i0:i0+T], Y[j0:j0+T]) (float64) for the kernel described by (tile, kind,
    profile, a, b, p).  TILE_SQDIST and TILE_DOT: X and Y are the rows of
    ``sqdist_gemm_rows`` / ``dot_gemm_rows`` (xaux / yaux: the norms / l), their GEMM
    accumulates into G (X's precision, zero on entry and on return: a GEMM into a
    zeroed tile skips BLAS's separate pass that zeroes its output, 0.15 ns of 0.7 per
    pair at d = 16) and the row functions turn it into K.  TILE_COORD: the coordinate
    loop into G, then K <- G (nothing when K is G)."""


@overload(kernel_tile, inline="always", prefer_literal=True)
def _ov_kernel_tile(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p):
    code = literal_code(tile)
    if code is None or literal_code(kind) is None or literal_code(profile) is None:
        return None
    if code == TILE_COORD:
        def impl(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p):
            for r in range(0, G.shape[0], 2):  # KERNEL_TILE is even
                coordinate_rows2(X, i0 + r, Yt, j0, G, r, kind, profile, a, xaux, yaux)
            widen(G, K)
    elif code == TILE_SQDIST:
        def impl(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p):
            tile_arguments(X, Y, i0, j0, G)
            for r in range(G.shape[0]):
                scaled_sqdist_row(G[r], K[r], profile)
    elif code == TILE_DOT:
        def impl(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p):
            T = G.shape[0]
            tile_arguments(X, Y, i0, j0, G)
            ya = yaux[j0:j0 + T]
            ym = ya.max()
            for r in range(T):
                scaled_dot_row(G[r], K[r], xaux[i0 + r], ya, ym, profile, b, p)
    else:
        raise nb.core.errors.TypingError(f"unknown tile code {code}")
    return impl


@nb.njit(inline="always", cache=True, error_model="numpy")
def tile_arguments(X, Y, i0, j0, G):
    """G += the GEMM of the prepared rows X[i0:i0+T] and Y[j0:j0+T] (G zero on entry: the
    profile's arguments)."""
    T = G.shape[0]
    gemm(X[i0:i0 + T], Y[j0:j0 + T], G, False, True, 1.0)


def value_tile(G, tile):
    """Where a tile's float64 values go: a new array for the GEMM tiles (their G is kept
    zero for the next GEMM) and for a float32 G (the mixed precision: float32 tiles,
    float64 products and sums); else G itself."""


@overload(value_tile, prefer_literal=True)
def _ov_value_tile(G, tile):
    code = literal_code(tile)
    if code is None:
        return None
    if G.dtype == types.float32 or code != TILE_COORD:
        return lambda G, tile: np.empty(G.shape)
    return lambda G, tile: G


def widen(G, K):
    """K <- G when K is a float64 copy of a float32 G (nothing when K is G)."""


@overload(widen, inline="always")
def _ov_widen(G, K):
    if G.dtype == K.dtype:
        return lambda G, K: None

    def impl(G, K):
        T0, T1 = G.shape
        for r in range(T0):
            for j in range(T1):
                K[r, j] = G[r, j]
    return impl


#: the one-column products' sums may be reassociated (vectorised partial sums; the
#: order is fixed by the compiled code, not by the thread count)
SUM_FLAGS = {"contract", "reassoc"}


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=SUM_FLAGS)
def tile_times_vector(K, v, out, i0, j0, transpose):
    """out[i0:i0+T] += K v[j0:j0+T] and, if ``transpose``, out[j0:j0+T] += K^T v[i0:i0+T],
    in one pass over the tile (each row read once, from L1, for both): the products with
    one column, where two BLAS GEMVs read the 512 KiB tile twice."""
    wide_vectors()
    T = K.shape[0]
    vj = v[j0:j0 + T]
    oj = out[j0:j0 + T]
    for r in range(T):
        Kr = K[r]
        s = 0.0
        if transpose:
            vi = v[i0 + r]
            for j in range(T):
                s += Kr[j] * vj[j]
                oj[j] += Kr[j] * vi
        else:
            for j in range(T):
                s += Kr[j] * vj[j]
        out[i0 + r] += s


# A one-column product of a GEMM tile (TILE_SQDIST, TILE_DOT's exp) takes each value in the
# same loop that folds it into the outputs: no value tile is written and read back
# (0.66 -> 0.53 ns per pair for the values and the fold, one thread).  The loop sums with
# reassociation; the value functions are compiled apart without it (the exp's shifter and
# the split of ln 2 must keep their rounding) and LLVM inlines them into the loop.
@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _exp_bounded_pair(u, profile):
    return fast_exp_bounded_scalar(np.float64(u))


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _exp_upper_pair(u, profile):
    return fast_exp_upper_scalar(np.float64(u))


@nb.njit(inline="always", cache=True, error_model="numpy")
def _fold_loop(g, vj, oj, vi, transpose, value, profile):
    s = 0.0
    if transpose:
        for j in range(g.shape[0]):
            e = np.float64(value(g[j], profile))
            g[j] = 0.0
            s += e * vj[j]
            oj[j] += e * vi
    else:
        for j in range(g.shape[0]):
            e = np.float64(value(g[j], profile))
            g[j] = 0.0
            s += e * vj[j]
    return s


def _folds(tile, profile):
    """Whether the codes have a fused fold: the squared-distance tiles, the exponential
    dot product's."""
    return tile == TILE_SQDIST or (tile == TILE_DOT and profile == DOT_EXP)


def _fold_values(g, vj, oj, vi, transpose, xn, ym, tile, profile):
    """The fused loop for the codes (see fold_row)."""


@overload(_fold_values, inline="always", prefer_literal=True)
def _ov_fold_values(g, vj, oj, vi, transpose, xn, ym, tile, profile):
    t, f = literal_code(tile), literal_code(profile)
    if t is None or f is None:
        return None
    if not _folds(t, f):
        raise nb.core.errors.TypingError(f"no fused fold for tile {t}, profile {f}")
    if t == TILE_SQDIST:
        def impl(g, vj, oj, vi, transpose, xn, ym, tile, profile):
            return _fold_loop(g, vj, oj, vi, transpose, sqdist_pair_value, profile)
    else:
        def impl(g, vj, oj, vi, transpose, xn, ym, tile, profile):
            if exp_dot_bounded(xn, ym):  # as dot_row_values
                return _fold_loop(g, vj, oj, vi, transpose, _exp_bounded_pair, profile)
            return _fold_loop(g, vj, oj, vi, transpose, _exp_upper_pair, profile)
    return impl


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=SUM_FLAGS)
def fold_row(g, vj, oj, vi, transpose, xn, ym, tile, profile):
    """One row of a GEMM tile's arguments g (one x) made into values and folded at once:
    returns sum_j k_j vj[j] and, if ``transpose``, oj[j] += k_j vi; g <- 0 (ready for the
    next tile's GEMM).  xn, ym: the row's norm and the largest of the columns' (the
    exponential dot product's bound, as dot_row_values)."""
    wide_vectors()
    literally(tile)
    literally(profile)
    return _fold_values(g, vj, oj, vi, transpose, xn, ym, tile, profile)


def fold_tile(X, Y, xaux, yaux, v, o, i0, j0, G, transpose, tile, profile):
    """For the codes with a fused fold (``fold_row``): o[I] += K[I, J] v[J] and, if
    ``transpose``, o[J] += K[I, J]^T v[I], the tile's values never stored; True.  Else
    nothing (no code), False: the caller makes the value tile."""


@overload(fold_tile, inline="always", prefer_literal=True)
def _ov_fold_tile(X, Y, xaux, yaux, v, o, i0, j0, G, transpose, tile, profile):
    t, f = literal_code(tile), literal_code(profile)
    if t is None or f is None:
        return None
    if not _folds(t, f):
        return lambda X, Y, xaux, yaux, v, o, i0, j0, G, transpose, tile, profile: False

    def impl(X, Y, xaux, yaux, v, o, i0, j0, G, transpose, tile, profile):
        T = G.shape[0]
        tile_arguments(X, Y, i0, j0, G)
        vj = v[j0:j0 + T]
        oj = o[j0:j0 + T]
        ym = yaux[j0:j0 + T].max()
        for r in range(T):
            o[i0 + r] += fold_row(G[r], vj, oj, v[i0 + r], transpose, xaux[i0 + r], ym,
                                  tile, profile)
        return True
    return impl


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _times_chunk(X, Y, Yt, xaux, yaux, V, out, ti, tj, s0, s1, symmetric,
                 tile, kind, profile, a, b, p):
    """out += K V over the tile pairs s0..s1 of one chunk (see kernel_times)."""
    wide_vectors()
    literally(tile)
    literally(kind)
    literally(profile)
    T = KERNEL_TILE
    G = np.zeros((T, T), X.dtype)
    K = value_tile(G, tile)
    v = V.reshape(V.size)[:V.shape[0]]  # the one column, contiguous (used when m = 1)
    o = out.reshape(out.size)[:out.shape[0]]
    for t in range(s0, s1):
        i0 = ti[t] * T
        j0 = tj[t] * T
        if V.shape[1] == 1 and not (symmetric and i0 == j0) and \
                fold_tile(X, Y, xaux, yaux, v, o, i0, j0, G, symmetric, tile, profile):
            continue  # (a diagonal tile is mirrored, below: values first)
        kernel_tile(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p)
        if symmetric and i0 == j0:
            mirror_diagonal(K)
        if V.shape[1] == 1:
            tile_times_vector(K, v, o, i0, j0, symmetric and i0 != j0)
            continue
        gemm(K, V[j0:j0 + T], out[i0:i0 + T], False, False, 1.0)
        if symmetric and i0 != j0:
            gemm(K, V[i0:i0 + T], out[j0:j0 + T], True, False, 1.0)


def kernel_times(X, Y, Yt, xaux, yaux, V, parts, ti, tj, starts, symmetric,
                 tile, kind, profile, a, b, p):
    """parts[c] += K V by tiles: tile pairs (ti[t], tj[t]) for t in [starts[c], starts[c+1])
    are chunk c's, chunks run in parallel.  V (ny, m) float64, parts (chunks or 1, nx, m)
    float64 zeros.  ``symmetric`` (Y is X, pairs I <= J): each tile serves both
    out[I] += K[I, J] V[J] and out[J] += K[I, J]^T V[I] (a diagonal tile only the first),
    each chunk into its own parts[c] (no two threads write one row); else each chunk owns
    whole row tiles, all into parts[0].  The products of a tile with V (one pass over the
    tile for one column, BLAS GEMMs for more) are made while the tile is in cache,
    accumulated into the output.  The chunking depends
    only on the shapes, so the sum of the parts is the same whatever the number of
    threads."""
    codes = (int(tile), int(kind), int(profile))
    map_chunks(_times_chunk, starts.shape[0] - 1, lambda c: (
        X, Y, Yt, xaux, yaux, V, parts[c] if symmetric else parts[0], ti, tj, starts[c],
        starts[c + 1], symmetric, *codes, a, b, p), literal=(12, 13, 14))


@nb.njit(nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def _gram_chunk(X, Y, Yt, xaux, yaux, out, ti, tj, s0, s1, symmetric,
                tile, kind, profile, a, b, p):
    """out's tiles of the tile pairs s0..s1 (see kernel_gram_tiles)."""
    wide_vectors()
    literally(tile)
    literally(kind)
    literally(profile)
    T = KERNEL_TILE
    n, m = out.shape
    G = np.zeros((T, T), X.dtype)
    K = value_tile(G, tile)
    for t in range(s0, s1):
        i0 = ti[t] * T
        j0 = tj[t] * T
        kernel_tile(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p)
        if symmetric and i0 == j0:
            mirror_diagonal(K)
        h, w = min(T, n - i0), min(T, m - j0)
        for r in range(h):
            orow = out[i0 + r, j0:j0 + w]  # a slice: out[i0 + r, j0 + j] would scatter
            Kr = K[r]
            for j in range(w):
                orow[j] = Kr[j]
        if symmetric and i0 != j0:
            mirror_tile(K, out, i0, j0, h, w)


#: bytes of the output's row pieces in which an upper tile is written transposed: one
#: cache line (8 float64 values, 16 float32) per store, K's rows that hold them in L1
#: (8.6-9.6 ms for the 171 upper tiles of 4,864 rows in float64, 11-17 ms by square
#: blocks of 16-64)
MIRROR_BYTES = 64


@nb.njit(nogil=True, cache=True, error_model="numpy")
def mirror_diagonal(K):
    """K[r, c] <- K[c, r] below the diagonal of a diagonal tile of a symmetric product
    (kernel_times, kernel_gram_tiles): exactly symmetric, where the augmented rows' GEMM
    adds the two squared norms in the order of the roles."""
    for r in range(K.shape[0]):
        for c in range(r):
            K[r, c] = K[c, r]


@nb.njit(nogil=True, cache=True, error_model="numpy")
def mirror_tile(K, out, i0, j0, h, w):
    """The lower triangle's copy of the tile at (i0, j0), i0 < j0, of a symmetric Gram, its
    h x w values K already in out[i0:i0+h, j0:j0+w]: out[j0 + c, i0 + r] <- K[r, c], a
    cache line of an output row at a time (a diagonal tile: :func:`mirror_diagonal`)."""
    L = max(1, MIRROR_BYTES // out.itemsize)
    for r0 in range(0, h, L):
        r1 = min(r0 + L, h)
        for c in range(w):
            orow = out[j0 + c, i0 + r0:i0 + r1]
            for r in range(r0, r1):
                orow[r - r0] = K[r, c]


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def mirror_upper(K):
    """K's lower triangle <- the transpose of its upper one, a square K of any size, by
    KERNEL_TILE tiles (:func:`mirror_diagonal`, :func:`mirror_tile`), a row of tiles per
    thread: a Gram computed whole by a product whose two halves need not agree to the bit
    (another BLAS's GEMM) made exactly symmetric."""
    n = K.shape[0]
    T = KERNEL_TILE
    nt = (n + T - 1) // T
    for bi in prange(nt):
        i0 = bi * T
        h = min(T, n - i0)
        mirror_diagonal(K[i0:i0 + h, i0:i0 + h])
        for bj in range(bi + 1, nt):
            j0 = bj * T
            w = min(T, n - j0)
            mirror_tile(K[i0:i0 + h, j0:j0 + w], K, i0, j0, h, w)


def kernel_gram_tiles(X, Y, Yt, xaux, yaux, out, ti, tj, starts, symmetric,
                      tile, kind, profile, a, b, p):
    """out <- K(X, Y)[:out.shape[0], :out.shape[1]] through the same tiles as
    ``kernel_times`` (X, Y padded to multiples of KERNEL_TILE rows; ``out`` float64 or
    float32): the tile pairs (ti[t], tj[t]) for t in [starts[c], starts[c+1]) are chunk
    c's, chunks run in parallel.  ``symmetric`` (Y is X, pairs I <= J): each tile is made
    once and written twice, at (I, J) and transposed at (J, I) (``mirror_tile``; a
    diagonal tile mirrored in place first, ``mirror_diagonal``), half the
    GEMMs and profile values of the whole product.  No two tile pairs write one element,
    so the bits do not depend on the number of threads."""
    codes = (int(tile), int(kind), int(profile))
    map_chunks(_gram_chunk, starts.shape[0] - 1, lambda c: (
        X, Y, Yt, xaux, yaux, out, ti, tj, starts[c], starts[c + 1], symmetric, *codes,
        a, b, p), literal=(11, 12, 13))


# --------------------------------------------------------------------------
# the intersection kernel's products through sorted coordinates
# --------------------------------------------------------------------------
@nb.njit(inline="always", cache=True, error_model="numpy")
def _two_sum(s, e, y):
    """(s + y rounded, e plus the rounding error of that sum) (Knuth's TwoSum: exact
    for any magnitudes, 6 flops; not contracted, so no fastmath)."""
    t = s + y
    z = t - s
    return t, e + ((s - (t - z)) + (y - z))


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def sorted_minima_times(order, xs, At, pos, V, parts):
    """parts[t, q, c] = sum over the t-th of T runs of the coordinates k of
    sum_b V[b, c] min(At[k, q], B[b, k]), for B's coordinate k sorted: ``order[k]`` the
    permutation that sorts it, ``xs[k]`` its sorted values, ``pos[k, q]`` how many of them
    precede At[k, q] (ties may fall on either side: min is the same).  For a coordinate
    and a column, sum_b v_b min(a, b_k) = P[p] + a S[p] with P[p] the sum of v b_k over
    the p smallest b_k and S[p] the sum of v over the others: P and S by compensated sums
    (TwoSum; each within an ulp or two of exact; the columns side by side, so that their
    sums' chains run in parallel), then one lookup per row.  Work O(d (n + m) c), against
    the direct sums' O(n m d) (Maji, Berg & Malik 2008's intersection-kernel SVM
    evaluation, here for every column and row at once)."""
    d, n = xs.shape
    T, m, c = parts.shape
    for t in prange(T):
        P = np.empty((n + 1, c))
        S = np.empty((n + 1, c))
        s = np.empty(c)
        e = np.empty(c)
        for k in range(t * d // T, (t + 1) * d // T):
            ok, xk, pk, ak = order[k], xs[k], pos[k], At[k]
            out = parts[t]
            s[:] = 0.0
            e[:] = 0.0
            P[0] = 0.0
            for r in range(n):
                v, x, row = V[ok[r]], np.float64(xk[r]), P[r + 1]
                for col in range(c):
                    s[col], e[col] = _two_sum(s[col], e[col], v[col] * x)
                    row[col] = s[col] + e[col]
            s[:] = 0.0
            e[:] = 0.0
            S[n] = 0.0
            for r in range(n - 1, -1, -1):
                v, row = V[ok[r]], S[r]
                for col in range(c):
                    s[col], e[col] = _two_sum(s[col], e[col], v[col])
                    row[col] = s[col] + e[col]
            for q in range(m):
                p, a, o = pk[q], np.float64(ak[q]), out[q]
                Pp, Sp = P[p], S[p]
                for col in range(c):
                    o[col] += Pp[col] + a * Sp[col]
