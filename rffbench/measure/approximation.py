"""Gram-matrix error of a feature map against the exact kernel.

On M = ``n_points`` training points (a seeded subsample; see
:mod:`rffbench.measure.points`):

* ``max_abs_error``    max_ij |K - Z Z^T|
* ``mean_abs_error``   mean over all n^2 entries (diagonal included)
* ``rel_fro_error``    ||K - Z Z^T||_F / ||K||_F
* ``rel_spectral_error`` ||K - Z Z^T||_2 / ||K||_2  (ARPACK, largest |eigenvalue|)
* ``expected_rel_fro_error`` sqrt(E ||K_hat - K||_F^2) / ||K||_F from the exact
  per-pair variances (Sutherland & Schneider 2015; theory.md section 2):
  rff: (1 + k(2 delta)/2 - k^2) / D,  rff_pairs: (1 + k(2 delta) - 2 k^2) / D,
  using k(2 delta) = k(2 x, 2 y) for shift-invariant kernels.  It is the RMS
  over redraws, to set beside the one observed draw.

Memory: K is the only n x n matrix; Z Z^T is subtracted from it in row blocks,
and k(2 delta) is computed block by block.
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh, svds

from .. import theory
from .. import _numba as nbk
from ..memory import Need
from ..results import record
from .points import resolve_n_points, sample_points

log = logging.getLogger(__name__)

BLOCK_ROWS = 512

VARIANCE_TERMS = theory.VARIANCE_TERMS


def spectral_norm(A, symmetric=True):
    """Largest singular value: the largest |eigenvalue| of a symmetric A (deterministic
    ARPACK start), an SVD otherwise."""
    n, m = A.shape
    if not np.any(A):  # ARPACK cannot start on the zero matrix
        return 0.0
    if not symmetric:
        if min(n, m) <= 2000:
            return float(np.linalg.norm(A, 2))
        val = svds(A, k=1, v0=np.ones(min(n, m)), return_singular_vectors=False, tol=1e-10)
        return float(val[0])
    if n <= 64:
        return float(np.max(np.abs(np.linalg.eigvalsh(A))))
    val = eigsh(A, k=1, which="LM", v0=np.ones(n), return_eigenvectors=False, tol=1e-10)
    return float(abs(val[0]))


def expected_fro_sq(kernel, X, Y, K, variance, D):
    """E ||K_hat - K||_F^2 = sum_ij Var(estimate_ij) over K = k(X, Y), blocked over rows."""
    term = VARIANCE_TERMS[variance]
    total = 0.0
    for s in range(0, X.shape[0], BLOCK_ROWS):
        K2 = kernel.gram_twice(X[s:s + BLOCK_ROWS], Y)  # k(2 delta)
        total += float(np.sum(term(K[s:s + BLOCK_ROWS], K2)))
    return total / D


def gram_errors(kernel, fmap, M, cross=False):
    """Error metrics of the fitted ``fmap`` on the points M -> dict metric -> value: of
    K(M, M), or with ``cross`` of K(X, Y) for the two halves X, Y of M (no diagonal)."""
    M64 = np.asarray(M, dtype=np.float64)
    Z = fmap.transform(M)  # dense, or (binning) scipy.sparse: products below stay sparse
    Z = Z.astype(np.float64, copy=False)
    h = M64.shape[0] // 2
    X, Y, ZX, ZY = (M64[:h], M64[h:2 * h], Z[:h], Z[h:2 * h]) if cross else (M64, M64, Z, Z)
    E = kernel.gram(X, Y)  # K now; K - Z_X Z_Y^T below, in place
    _, _, k_sq = nbk.abs_max_sum_sq(E)
    k_fro = np.sqrt(k_sq)
    k_two = spectral_norm(E, symmetric=not cross)
    out = {}
    if fmap.variance in VARIANCE_TERMS:
        exp_sq = expected_fro_sq(kernel, X, Y, E, fmap.variance, fmap.n_components)
        out["expected_rel_fro_error"] = np.sqrt(exp_sq) / k_fro
    for s in range(0, E.shape[0], BLOCK_ROWS):
        G = ZX[s:s + BLOCK_ROWS] @ ZY.T
        E[s:s + BLOCK_ROWS] -= G.toarray() if sp.issparse(G) else G
    e_max, e_abs, e_sq = nbk.abs_max_sum_sq(E)
    out.update(max_abs_error=e_max, mean_abs_error=e_abs / E.size,
               rel_fro_error=np.sqrt(e_sq) / k_fro, rel_spectral_error=spectral_norm(E, symmetric=not cross) / k_two)
    return out


def check(ctx, cfg):
    resolve_n_points(ctx, "approximation", cfg)


def needs(ctx, cfg):
    """K (n x n float64, E in place), a block of k(2 delta), M in float64, the map and Z
    (+ its float64 copy), ARPACK's vectors."""
    n, _ = resolve_n_points(ctx, "approximation", cfg)
    d, it, key = ctx.data.d, ctx.itemsize, "measure.approximation.n_points"

    def nbytes(v):
        m, D = v[key], v["D"]
        return 8.0 * (m * m + BLOCK_ROWS * m + m * d + 24 * m + m * D) \
            + ctx.map_cls.memory_bytes(m, d, D, it, fit_rows=ctx.n_train, **ctx.map_params)

    return [Need("the approximation measurement (the n_points x n_points exact Gram and the "
                 "n_points x D features)", nbytes, {key: (n, 2), "D": (ctx.cfg.D, 1)})]


def measure(ctx, cfg):
    n, note = resolve_n_points(ctx, "approximation", cfg)
    M = sample_points(ctx, "approximation", n)
    fmap = ctx.make_map().fit(ctx.fit_rows)
    log.info("approximation: %s vs exact %s on %d points, D=%d", fmap.name, ctx.kernel.name, n,
             fmap.n_components)
    errs = gram_errors(ctx.kernel, fmap, M, cross=cfg.cross)
    if cfg.cross:
        note += f"; K(X, Y) of two disjoint halves of {n // 2} points (no diagonal)"
    if fmap.DATA_DEPENDENT:
        note += (f"; data-dependent map: fitted on the {ctx.n_train} training rows, which "
                 "include these points")
    rows = [record("approximation", m, errs[m], "", note=note)
            for m in ("max_abs_error", "mean_abs_error", "rel_fro_error", "rel_spectral_error")]
    if "expected_rel_fro_error" in errs:
        rows.append(record("approximation", "expected_rel_fro_error",
                           errs["expected_rel_fro_error"], "", method="theory",
                           note="RMS over redraws, exact variance formula"))
    else:
        rows.append(record("approximation", "expected_rel_fro_error", None, method="theory",
                           note=f"no exact variance formula for features={fmap.name}"))
    return rows
