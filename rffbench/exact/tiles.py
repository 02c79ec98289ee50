"""The fused exact kernel products' rows and drivers: the rows prepared as the numba tiles
take them (:class:`TiledRows`), K(A, B) V tile by tile with each tile in one thread's cache
(:func:`tiled_times`; the intersection kernel's through its sorted coordinates,
:func:`sorted_minima_times`) and K(A, B) itself from the same tiles (:func:`tiled_gram`).
rffbench.exact builds its operator, predictions and Gram columns on these."""
from __future__ import annotations

import numpy as np

from .. import _numba as nbk
from ..kernels.base import pad_rows, tile_operands, tile_schedule

#: symmetric products: chunks of tile pairs, each with its own output (summed in a fixed
#: order, so the result does not depend on the number of threads); at most this many
#: chunks and this many bytes of chunk outputs
SYM_CHUNKS = 16
CHUNK_BYTES = 256 * 2**20


class TiledRows:
    """Rows prepared by ``kernel.inputs`` as the fused products take them: padded with
    zero rows to a multiple of KERNEL_TILE, as the tile's GEMM reads them in the left
    (``left``: the rows i of K[i, j]) and right (``right``: the rows j) roles (the
    squared-distance tiles' augmented rows, ``nbk.sqdist_gemm_rows``, the dot-product
    tiles' scaled ones, ``nbk.dot_gemm_rows``; else the rows themselves), their per-row
    numbers (``TileSpec.aux``: the dot-product tiles' norms, the L1 distance's coordinate
    sums) and, for the coordinate loop, the transposed copy it reads."""

    def __init__(self, spec, Xw):
        self.n = Xw.shape[0]
        self.left, self.right, self.aux, self.Xt = tile_operands(spec, Xw)
        self.rows = self.left.shape[0]
        self.tiles = self.rows // nbk.KERNEL_TILE
        self._sorted = self._ranks = None

    def sorted_coordinates(self):
        """(order, values): each coordinate's sorting permutation of the rows (d x n) and
        its sorted values, made once (the sums of minima's products, ``sorted_minima``)."""
        if self._sorted is None:
            X = self.Xt[:, :self.n]
            order = np.argsort(X, axis=1, kind="stable")
            self._sorted = order, np.take_along_axis(X, order, axis=1)
        return self._sorted

    def positions_in(self, B):
        """pos[k, q]: how many of B's rows have coordinate k below this row q's (d x n);
        for B itself, each row's rank in the sort (made once: ties fall on either side)."""
        order, values = B.sorted_coordinates()
        if B is self:
            if self._ranks is None:
                ranks = np.empty_like(order)
                np.put_along_axis(ranks, order, np.arange(self.n)[None, :], axis=1)
                self._ranks = ranks
            return self._ranks
        return np.stack([np.searchsorted(values[k], self.Xt[k, :self.n])
                         for k in range(values.shape[0])]) if self.n else \
            np.zeros((values.shape[0], 0), dtype=np.int64)


def tiled_times(spec, A, B, V, symmetric=False):
    """K(A, B) V for TiledRows A and B (symmetric: B is A, each pair evaluated once) by
    the fused numba product: float64 result (A.n x m) and accumulation whatever the
    rows' precision (float32 rows: float32 tiles, the mixed precision)."""
    V = np.asarray(V, dtype=np.float64)
    m = V.shape[1]
    if not A.n or not B.n or not m:
        return np.zeros((A.n, m))
    if spec.sorted_minima:
        return sorted_minima_times(spec, A, B, V)
    Vp = pad_rows(V, nbk.KERNEL_TILE)
    rows = A.rows
    chunks = 1
    if symmetric:
        chunks = max(1, min(SYM_CHUNKS, A.tiles * (A.tiles + 1) // 2,
                            CHUNK_BYTES // (8 * m * rows)))
    ti, tj, starts = tile_schedule(A.tiles, B.tiles, bool(symmetric), chunks)
    parts = np.zeros((chunks, rows, m))
    with nbk.blas_single_thread():
        nbk.kernel_times(A.left, B.right, B.Xt, A.aux, B.aux, Vp, parts, ti, tj, starts,
                         bool(symmetric), *spec)
    out = parts[0]
    for c in range(1, chunks):
        out += parts[c]
    return out[:A.n].copy()


def sorted_minima_times(spec, A, B, V):
    """K(A, B) V for a sum of minima (the intersection kernel) through B's sorted
    coordinates (:meth:`TiledRows.sorted_coordinates`): for a coordinate k and a column v,
    sum_b v_b min(a, b_k) = (sum of v_b b_k over b_k < a) + a (sum of v_b over the rest),
    prefix sums along the sort and one lookup per row of A (``nbk.sorted_minima_times``).
    Exact in the same sense as the tiles (each coordinate's term within a few ulps of the
    sum of |v_b| min(a, b_k)), in O(d (n log n + m log n + (n + m) c)) instead of n m d
    evaluations: no pair is evaluated.  The coordinates are split into at most SYM_CHUNKS
    runs (CHUNK_BYTES), each with its own output summed in a fixed order: the result does
    not depend on the number of threads."""
    order, values = B.sorted_coordinates()
    pos = A.positions_in(B)
    d = values.shape[0]
    chunks = max(1, min(SYM_CHUNKS, d, CHUNK_BYTES // (8 * V.shape[1] * A.n)))
    parts = np.zeros((chunks, A.n, V.shape[1]))
    nbk.sorted_minima_times(order, values, A.Xt, pos, np.ascontiguousarray(V[:B.n]), parts)
    return spec.a * parts.sum(axis=0)


def route_precision(route, precision):
    """The precision a route makes its products in: ``precision`` ("float64" or "mixed")
    on the fused tiles, float64 on every other route (explicit features, sorted
    coordinates, Python tiles), whatever was asked."""
    return precision if route == "tiles" else "float64"


def product_route(spec):
    """How the fused products K V are made for a kernel's tile spec: "sorted coordinates"
    (the intersection kernel), "tiles", or "python tiles" (no spec: a plug-in's Gram)."""
    if spec is None:
        return "python tiles"
    return "sorted coordinates" if spec.sorted_minima else "tiles"


def tiled_gram(spec, A, B):
    """K(A, B) (A.n x B.n, float64) through the same tiles as :func:`tiled_times`."""
    out = np.empty((A.n, B.n))
    if out.size:
        ti, tj, starts = tile_schedule(A.tiles, B.tiles, False, 1)
        with nbk.blas_single_thread():
            nbk.kernel_gram_tiles(A.left, B.right, B.Xt, A.aux, B.aux, out, ti, tj, starts,
                                  False, *spec)
    return out
