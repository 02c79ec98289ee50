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
from scipy.sparse.linalg import eigsh

from .. import theory
from .. import _numba as nbk
from ..memory import Need
from ..features import gram_of
from ..results import record
from .points import resolve_n_points, sample_points

log = logging.getLogger(__name__)

BLOCK_ROWS = 512

VARIANCE_TERMS = theory.VARIANCE_TERMS


def spectral_norm(A):
    """Largest |eigenvalue| of a symmetric matrix (deterministic ARPACK start)."""
    n = A.shape[0]
    if not np.any(A):  # ARPACK cannot start on the zero matrix
        return 0.0
    if n <= 64:
        return float(np.max(np.abs(np.linalg.eigvalsh(A))))
    val = eigsh(A, k=1, which="LM", v0=np.ones(n), return_eigenvectors=False, tol=1e-10)
    return float(abs(val[0]))


def expected_fro_sq(kernel, M, K, variance, D):
    """E ||K_hat - K||_F^2 = sum_ij Var(estimate_ij), blocked over rows."""
    term = VARIANCE_TERMS[variance]
    M2 = 2.0 * np.asarray(M, dtype=np.float64)
    total = 0.0
    for s in range(0, M2.shape[0], BLOCK_ROWS):
        K2 = kernel.gram(M2[s:s + BLOCK_ROWS], M2)
        total += float(np.sum(term(K[s:s + BLOCK_ROWS], K2)))
    return total / D


def gram_errors(kernel, fmap, M):
    """Error metrics of the fitted ``fmap`` on the points M -> dict metric -> value."""
    M64 = np.asarray(M, dtype=np.float64)
    Z = fmap.transform(M).astype(np.float64, copy=False)
    E = kernel.gram(M64)  # K now; K - Z Z^T below, in place
    _, _, k_sq = nbk.abs_max_sum_sq(E)
    k_fro = np.sqrt(k_sq)
    k_two = spectral_norm(E)
    out = {}
    if fmap.variance in VARIANCE_TERMS:
        exp_sq = expected_fro_sq(kernel, M64, E, fmap.variance, fmap.n_components)
        out["expected_rel_fro_error"] = np.sqrt(exp_sq) / k_fro
    for s in range(0, E.shape[0], BLOCK_ROWS):
        E[s:s + BLOCK_ROWS] -= gram_of(Z, slice(s, s + BLOCK_ROWS))
    e_max, e_abs, e_sq = nbk.abs_max_sum_sq(E)
    out.update(max_abs_error=e_max, mean_abs_error=e_abs / E.size,
               rel_fro_error=np.sqrt(e_sq) / k_fro, rel_spectral_error=spectral_norm(E) / k_two)
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
    fmap = ctx.make_map().fit(ctx.data.X_train)
    log.info("approximation: %s vs exact %s on %d points, D=%d", fmap.name, ctx.kernel.name, n,
             fmap.n_components)
    errs = gram_errors(ctx.kernel, fmap, M)
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
