"""Gram-matrix error of a feature map against the exact kernel.

The kernel estimate is K_hat = Z_X Z_Y^T + c, c the map's ``kernel_offset_`` (0 for
every map but a quadrature rule with a centre term).  On the points of the run
(``measure.approximation.cross``): M = ``n_points`` training points (a seeded
subsample, :mod:`rffbench.measure.points`; ``rows=test_first``: the first ``n_points``
test rows in the data's order, the same rows at every seed, as Büchel et al.'s "first
1,000 test rows") and K(M, M); ``halves``: X and Y the two
halves of M in a seeded random order, K(X, Y) (no diagonal); ``independent``: X and Y
two independent samples of ``n_points / 2`` training points each (they may share
points), K(X, Y), as the quadrature papers (Munkhoeva et al. 2018) do.

* ``max_abs_error``    max_ij |K - K_hat|
* ``mean_abs_error``   mean over all entries (the diagonal included for K(M, M))
* ``rel_fro_error``    ||K - K_hat||_F / ||K||_F
* ``rel_spectral_error`` ||K - K_hat||_2 / ||K||_2  (ARPACK, largest singular value)
* ``expected_rel_fro_error`` sqrt(E ||K_hat - K||_F^2) / ||K||_F from the exact
  per-pair variances (Sutherland & Schneider 2015; rffbench.theory.VARIANCE_TERMS):
  rff: (1 + k(2 delta)/2 - k^2) / D,  rff_pairs: (1 + k(2 delta) - 2 k^2) / D,
  using k(2 delta) = k(2 x, 2 y) for shift-invariant kernels.  It is the RMS
  over redraws, to set beside the observed draws.

``measure.approximation.redraws`` = R > 1 draws R independent maps (the first with the
run seed, the others with seeds spawned from it) on the same points, as papers that
average "runs": each metric's record is then the mean over the R draws (``spread``: their
standard deviation, ``n_repeats``: R) and every draw's values go to
``approximation_redraws.csv``.

Memory: K and one n x n error buffer; Z Z^T is subtracted in row blocks, and
k(2 delta) is computed block by block.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh, svds

from .. import _numba as nbk
from .. import theory
from ..checks import N_POINTS, Check, Int, OneOf, check_constraints
from ..exact import device_gram
from ..memory import Need
from ..progress import Progress
from ..results import REDRAWS_FILE, record
from .base import Measurement
from .points import redraw_seeds, resolve_n_points, sample_points

log = logging.getLogger(__name__)

BLOCK_ROWS = 512
#: n x m matrices up to this min(n, m) get a dense SVD / eigensolver for the 2-norm
DENSE_NORM_MAX = 64

VARIANCE_TERMS = theory.VARIANCE_TERMS
METRICS = ("max_abs_error", "mean_abs_error", "rel_fro_error", "rel_spectral_error")


#: measure.approximation.cross: K(M, M), or K(X, Y) of two halves of M, or of two
#: independent samples
CROSS_MODES = ("halves", "independent")


#: measure.approximation.rows: where M comes from
ROWS = ("train", "test_first")

#: bytes per redraw: its metrics, its row of approximation_redraws.csv and that row's text
REDRAW_BYTES = 256.0


@dataclass
class ApproximationConfig:
    """measure.approximation: Gram-matrix error of the map against the exact kernel."""

    enabled: bool = True
    #: training points used (at most the training-set size); null = min(1000, n_train)
    n_points: Optional[int] = None
    #: false: the error of K(M, M); halves (or true): of K(X, Y), X and Y the two halves
    #: of the n_points (no diagonal); independent: X and Y two independent samples of
    #: n_points / 2 training points each (the quadrature papers' protocol)
    cross: Any = False
    #: train: M is a seeded subsample of the training rows; test_first: the first n_points
    #: test rows in the data's order (the same rows at every seed; with
    #: dataset.split=ordered, the rows the file's test part starts with)
    rows: str = "train"
    #: independent draws of the map on the same points (seeds from the run seed): the
    #: records hold their mean (spread: standard deviation), approximation_redraws.csv each
    redraws: int = 1

    #: n_points when null (capped at the training-set size)
    DEFAULT_N_POINTS = 1000

    constraints = {
        "n_points": N_POINTS,
        "cross": Check(lambda v: v is False or v is True or v in CROSS_MODES,
                       f"use false, {', '.join(CROSS_MODES)} (true = halves)", ["x", 1, None]),
        "redraws": Int(1),
        "rows": OneOf(ROWS),
    }

    def __post_init__(self):
        check_constraints(self, "measure.approximation")
        self.cross = "halves" if self.cross is True else self.cross


def spectral_norm(A, symmetric=True):
    """Largest singular value: the largest |eigenvalue| of a symmetric A, the largest
    singular value otherwise (ARPACK with a deterministic start; dense for small A)."""
    n, m = A.shape
    if not np.any(A):  # ARPACK cannot start on the zero matrix
        return 0.0
    if min(n, m) <= DENSE_NORM_MAX:
        return float(np.max(np.abs(np.linalg.eigvalsh(A)))) if symmetric and n == m \
            else float(np.linalg.norm(A, 2))
    if not symmetric:
        val = svds(A, k=1, v0=np.ones(min(n, m)), return_singular_vectors=False, tol=1e-10)
        return float(val[0])
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


def estimate_error_into(fmap, ZX, ZY, K, out):
    """out <- K - (Z_X Z_Y^T + the map's kernel_offset_), in row blocks."""
    c = float(getattr(fmap, "kernel_offset_", 0.0))
    for s in range(0, K.shape[0], BLOCK_ROWS):
        G = ZX[s:s + BLOCK_ROWS] @ ZY.T
        np.subtract(K[s:s + BLOCK_ROWS], G.toarray() if sp.issparse(G) else G,
                    out=out[s:s + BLOCK_ROWS])
        if c:
            out[s:s + BLOCK_ROWS] -= c
    return out


class Target:
    """The exact kernel on the points of a run: K = k(X, Y) and its norms (``device="cuda"``:
    K from the GPU's Gram kernel where the kernel has one, rffbench.exact.device_gram)."""

    def __init__(self, kernel, X, Y, symmetric, device="cpu"):
        self.kernel, self.symmetric = kernel, symmetric
        self.X = np.asarray(X, dtype=np.float64)
        self.Y = self.X if symmetric else np.asarray(Y, dtype=np.float64)
        self.K = device_gram(kernel, self.X, self.Y, device)
        _, _, k_sq = nbk.abs_max_sum_sq(self.K)
        self.fro = float(np.sqrt(k_sq))
        self.two = spectral_norm(self.K, symmetric=symmetric)

    def errors(self, fmap, X, Y, out):
        """The metrics of the fitted ``fmap`` (X, Y: the points in the run's dtype); ``out``
        is an n x m scratch buffer."""
        ZX = fmap.transform(X)
        ZY = ZX if self.symmetric else fmap.transform(Y)
        ZX, ZY = (Z.astype(np.float64, copy=False) for Z in (ZX, ZY))
        E = estimate_error_into(fmap, ZX, ZY, self.K, out)
        e_max, e_abs, e_sq = nbk.abs_max_sum_sq(E)
        return dict(max_abs_error=e_max, mean_abs_error=e_abs / E.size,
                    rel_fro_error=np.sqrt(e_sq) / self.fro,
                    rel_spectral_error=spectral_norm(E, symmetric=self.symmetric) / self.two)

    def expected_rel_fro(self, fmap):
        """The exact expected error of the map's family, or None (no formula)."""
        if fmap.tags.variance not in VARIANCE_TERMS:
            return None
        exp_sq = expected_fro_sq(self.kernel, self.X, self.Y, self.K, fmap.tags.variance,
                                 fmap.n_components)
        return np.sqrt(exp_sq) / self.fro


def gram_errors(kernel, fmap, M, cross=False):
    """Error metrics of the fitted ``fmap`` on the points M -> dict metric -> value: of
    K(M, M), or with ``cross`` of K(X, Y) for the two halves X, Y of M (no diagonal)."""
    h = M.shape[0] // 2
    X, Y = (M[:h], M[h:2 * h]) if cross else (M, M)
    t = Target(kernel, X, Y, symmetric=not cross)
    out = t.errors(fmap, X, Y, np.empty_like(t.K))
    exp = t.expected_rel_fro(fmap)
    if exp is not None:
        out["expected_rel_fro_error"] = exp
    return out


def points(ctx, cfg):
    """(X, Y, note) of the run: Y is X for K(M, M) (``cross`` false)."""
    n, note = resolve_n_points(ctx, "approximation", cfg)
    if cfg.rows == "test_first":
        M = np.asarray(ctx.data.X_test[:n])
        if cfg.cross == "independent":
            h = n // 2
            return M[:h], M[h:2 * h], f"{note}; K(X, Y) of its first and second {h} (no diagonal)"
    elif cfg.cross == "independent":
        h = n // 2
        X = sample_points(ctx, "approximation-x", h)
        Y = sample_points(ctx, "approximation-y", h)
        return X, Y, (f"{note}; K(X, Y) of two independent samples of {h} training points "
                      "each (no diagonal)")
    else:
        M = sample_points(ctx, "approximation", n)
    if cfg.cross == "halves":
        h = n // 2
        order = ctx.rng("approximation-halves").permutation(n)
        return M[order[:h]], M[order[h:2 * h]], (f"{note}; K(X, Y) of two disjoint random "
                                                 f"halves of {h} points (no diagonal)")
    return M, M, note


def redraws_table(values, offsets):
    """Long per-redraw table: redraw, metric, value (and the map's kernel_offset_)."""
    import pandas as pd

    R = len(offsets)
    parts = [pd.DataFrame(dict(redraw=np.arange(R), metric=m, value=values[m]))
             for m in METRICS]
    parts.append(pd.DataFrame(dict(redraw=np.arange(R), metric="kernel_offset", value=offsets)))
    return pd.concat(parts, ignore_index=True)


class Approximation(Measurement):
    """Gram-matrix error |K - K_hat| of the map against the exact kernel on a subsample of the
    training set."""

    name = "approximation"
    Config = ApproximationConfig
    thread_dependent = {"*_error": "Z Z^T and the exact Gram's norms are BLAS products and "
                                   "reductions whose summation order depends on the thread "
                                   "count (relative differences ~1e-13)"}

    def check(self, ctx, cfg):
        resolve_n_points(ctx, "approximation", cfg)

    def needs(self, ctx, cfg):
        """K and the error buffer (n x n float64 each), a block of k(2 delta), the points in
        float64, the map and Z (+ its float64 copy), ARPACK's vectors."""
        n, _ = resolve_n_points(ctx, "approximation", cfg)
        d, it, key = ctx.data.d, ctx.itemsize, "measure.approximation.n_points"
        rkey = "measure.approximation.redraws"

        def nbytes(v):
            m, D = v[key], v["D"]
            return 8.0 * (2 * m * m + BLOCK_ROWS * m + m * d + 24 * m + m * D) \
                + ctx.map_cls.memory_bytes(m, d, D, it, train_rows=ctx.n_train, **ctx.map_params) \
                + REDRAW_BYTES * v[rkey]

        return [Need("the approximation measurement (the exact Gram and the error, n_points x "
                     "n_points, the n_points x D features, a row per redraw)", nbytes,
                     {key: (n, 2), "D": (ctx.cfg.D, 1), rkey: (cfg.redraws, 1)})]

    def run(self, ctx, cfg):
        X, Y, note = points(ctx, cfg)
        symmetric = cfg.cross is False
        target = Target(ctx.kernel, X, Y, symmetric, ctx.device)
        buf = np.empty_like(target.K)
        R = cfg.redraws
        values = {m: np.empty(R) for m in METRICS}
        offsets = np.empty(R)
        progress = Progress("approximation", R, "redraws") if R > 1 else None
        fmap = None
        for r, seed in enumerate(redraw_seeds(ctx.cfg.seed, R, 0xA991)):
            fmap = ctx.make_map(seed=seed if r == 0 else np.random.default_rng(seed))
            fmap.fit(ctx.fit_rows)
            if r == 0:
                log.info("approximation: %s vs exact %s on %d x %d points, D=%d%s", fmap.name,
                         ctx.kernel.name, X.shape[0], Y.shape[0], fmap.n_components,
                         f", {R} redraws" if R > 1 else "")
            errs = target.errors(fmap, X, Y, buf)
            for m in METRICS:
                values[m][r] = errs[m]
            offsets[r] = getattr(fmap, "kernel_offset_", 0.0)
            if progress is not None:
                progress.step()
        if fmap.tags.data_dependent:
            note += (f"; data-dependent map: fitted on the {ctx.n_train} training rows, which "
                     "include these points")
        if np.any(offsets != 0):
            note += "; estimate z(x).z(y) + the map's kernel_offset_ (centre term)"
        if R > 1:
            note += f"; mean over {R} redraws of the map on the same points (spread: their sd)"
            rows = [record("approximation", m, float(values[m].mean()), "",
                           spread=float(values[m].std(ddof=1)), n_repeats=R, note=note)
                    for m in METRICS]
            ctx.tables[REDRAWS_FILE] = redraws_table(values, offsets)
        else:
            rows = [record("approximation", m, float(values[m][0]), "", note=note) for m in METRICS]
        exp = target.expected_rel_fro(fmap)
        if exp is not None:
            rows.append(record("approximation", "expected_rel_fro_error", exp, "", method="theory",
                               note="RMS over redraws, exact variance formula"))
        else:
            x, y = (np.asarray(r.toarray() if sp.issparse(r) else r, np.float64).ravel()
                    for r in (X[:1], Y[-1:]))
            per_pair = ctx.map_cls.exact_mse(ctx.kernel, x, y, fmap.n_components,
                                             **ctx.cfg.features.map_params()) is not None
            rows.append(record("approximation", "expected_rel_fro_error", None, method="theory",
                               note=(f"features={fmap.name} has an exact variance per pair "
                                     "(the bounds measurement's variance_theory), not summed "
                                     "over the Gram matrix here" if per_pair else
                                     f"no exact variance formula for features={fmap.name}")))
        return rows
