"""Pointwise mean squared error of the kernel estimate over redraws, against its formula.

The pairs (x, y):

* ``pairs=grid``: every combination of |x - y| in ``distances`` and |x + y| in ``sums``
  (both in lengthscales), x + y orthogonal to x - y in a seeded random orientation: the
  geometry that the formulas depend on (the trigonometric maps' error depends on |x - y|
  only, the positive features' also on |x + y|: Choromanski et al. 2021, Lemma 2);
* ``pairs=data``: ``n_pairs`` pairs of distinct training points (seeded).

R = ``redraws`` independent maps (the run seed's, then seeds spawned from it) give per pair
the mean estimate z(x).z(y) + c (c: the map's kernel_offset_), its mean squared error
against the exact k(x, y) and the standard error of that MSE (the spread of the squared
errors / sqrt(R)), and the exact MSE where rffbench knows a formula
(:func:`rffbench.theory.estimate_mse`: rff and rff_pairs by Sutherland & Schneider 2015,
positive by Choromanski et al.'s Lemma 2, orf by the exact variance derived in
:func:`rffbench.theory.orf_variance`).

Records (``dist`` = |x - y| in data units): per pair ``mse_empirical`` (``spread``: its
standard error, ``n_repeats``: R) and ``mse_theory``; over the pairs ``mse_mean`` (method
``empirical``, spread: its standard error; method ``theory``).  Every pair's geometry and
values go to ``variance_pairs.csv``.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from typing import List

import numpy as np

from .. import theory
from ..checks import Applies, Int, Numbers, OneOf, as_list, check_constraints
from ..errors import ConfigError, RangeError
from ..memory import Need
from ..progress import Progress
from ..results import VARIANCE_FILE, record
from .base import Measurement
from .points import redraw_seeds

log = logging.getLogger(__name__)


VARIANCE_PAIRS = ("grid", "data")


@dataclass
class VarianceConfig:
    """measure.variance: the estimate's mean squared error at pairs of points over redraws,
    against its formula (off by default; the formula presets turn it on)."""

    enabled: bool = False
    #: independent maps (>= 2); the MSE's standard error falls as 1/sqrt(redraws)
    redraws: int = 1000
    #: grid: every |x - y| in distances with every |x + y| in sums (lengthscales);
    #: data: n_pairs random pairs of training points
    pairs: str = "grid"
    #: grid: |x - y| in lengthscales
    distances: List[float] = field(default_factory=lambda: [0.25, 0.5, 1.0, 1.5, 2.0, 3.0])
    #: grid: |x + y| in lengthscales
    sums: List[float] = field(default_factory=lambda: [0.0])
    #: data: how many random pairs of training points
    n_pairs: int = 20

    constraints = {
        "redraws": Int(2), "pairs": OneOf(VARIANCE_PAIRS),
        "distances": Numbers(0, text="use a non-empty list of distinct numbers >= 0 "
                                     "(lengthscales), e.g. [0.5,1,2]"),
        "sums": Numbers(0, text="use a non-empty list of distinct numbers >= 0 (lengthscales), "
                                "e.g. [0.5,1,2]"),
        "n_pairs": Int(1),
    }

    #: where the keys have an effect: the grid's distances and sums, the data's n_pairs
    applies = {
        **{k: Applies(lambda c: c.measure.variance.pairs == "grid",
                      "measure.variance.pairs=data: the pairs are training points")
           for k in ("distances", "sums")},
        "n_pairs": Applies(lambda c: c.measure.variance.pairs == "data",
                           "measure.variance.pairs=grid: the grid sets the pairs"),
    }

    def __post_init__(self):
        self.distances, self.sums = as_list(self.distances), as_list(self.sums)
        check_constraints(self, "measure.variance")


def _pairs(ctx, cfg):
    """(X, Y, r_minus, r_plus): the pairs as rows of X and Y, and their |x - y|, |x + y| in
    lengthscales."""
    d, ls = ctx.data.d, ctx.kernel.ls
    rng = ctx.rng("variance-pairs")
    if cfg.pairs == "data":
        Xtr = ctx.data.X_train
        idx = rng.choice(Xtr.shape[0], 2 * cfg.n_pairs, replace=False)
        X = np.asarray(Xtr[np.sort(idx[:cfg.n_pairs])], dtype=np.float64)
        Y = np.asarray(Xtr[np.sort(idx[cfg.n_pairs:])], dtype=np.float64)
    else:
        geo = [(a, b) for a in cfg.distances for b in cfg.sums]
        X, Y = np.empty((len(geo), d)), np.empty((len(geo), d))
        for i, (a, b) in enumerate(geo):
            Q, _ = np.linalg.qr(rng.standard_normal((d, min(d, 2))))
            t = Q[:, 0] * a * ls  # x - y
            s = (Q[:, 1] if d > 1 else Q[:, 0]) * b * ls  # x + y
            X[i], Y[i] = (s + t) / 2, (s - t) / 2
    rm = np.linalg.norm(X - Y, axis=1) / ls
    rp = np.linalg.norm(X + Y, axis=1) / ls
    return X, Y, rm, rp


def _theory(ctx, X, Y):
    """The exact MSE of the run's map at each pair (rows of X, Y), None where rffbench knows
    no formula (:func:`rffbench.theory.estimate_mse`)."""
    params = ctx.cfg.features.map_params()
    if getattr(ctx.kernel, "warps", False):
        return [None] * X.shape[0]
    with np.errstate(over="ignore"):
        return [theory.estimate_mse(ctx.map_cls.name, ctx.kernel, X[i], Y[i], ctx.cfg.D,
                                    **params) for i in range(X.shape[0])]


def pairs_table(rm, rp, dist, exact, mean, mse, se, theo):
    """One row per pair: its geometry (in lengthscales and in data units), the exact k, the
    mean estimate, the MSE and its standard error, the formula (NaN: none)."""
    import pandas as pd

    return pd.DataFrame(dict(pair=np.arange(len(rm)), r_minus=rm, r_plus=rp, dist=dist,
                             k=exact, mean_estimate=mean, mse=mse, mse_se=se,
                             mse_theory=[np.nan if t is None else t for t in theo]))


class Variance(Measurement):
    """Mean squared error of the kernel estimate at pairs of points over redraws, against its
    formula."""

    name = "variance"
    Config = VarianceConfig

    def check(self, ctx, cfg):
        if cfg.pairs == "data" and 2 * cfg.n_pairs > ctx.n_train:
            raise ConfigError(f"measure.variance.n_pairs={cfg.n_pairs} is not allowed: "
                              f"dataset={ctx.data.name} has {ctx.n_train} training points, enough "
                              f"for at most {ctx.n_train // 2} pairs")
        if cfg.pairs == "grid":
            from ..kernels import make_kernel

            kc = ctx.cfg.kernel
            k = make_kernel(kc.name, **kc.kernel_params(lengthscale=1.0, gamma=None))
            floor = k.input_floor()
            if floor > -math.inf:
                raise ConfigError(f"measure.variance.pairs='grid' is not allowed with kernel="
                                  f"{kc.name}: the grid's pairs lie around 0 and leave the "
                                  "kernel's domain (inputs "
                                  f"{'>=' if k.input_floor_inclusive else '>'}"
                                  f" {floor:g}); use measure.variance.pairs=data")
        if cfg.pairs == "grid" and ctx.data.d == 1 and any(b for b in cfg.sums) \
                and any(a for a in cfg.distances):
            raise ConfigError("measure.variance.sums is not allowed with d=1: x + y cannot be "
                              "orthogonal to x - y in one dimension (use sums=[0])")
        if cfg.pairs == "grid":
            self._check_grid_range(ctx, cfg)

    def _check_grid_range(self, ctx, cfg):
        """The grid's pairs (in data units: lengthscales x kernel.lengthscale) and their exact
        MSE must be finite numbers: a value that overflows float64 is refused here, naming
        the key and the largest value that fits, rather than recorded as inf."""
        from ..datasets import MAX_ABS_VALUE

        ls = ctx.kernel.ls
        for key in ("distances", "sums"):
            top = max(getattr(cfg, key))
            if top * ls > MAX_ABS_VALUE:
                raise ConfigError(
                    f"measure.variance.{key}={getattr(cfg, key)} is not allowed with kernel."
                    f"lengthscale={ls:.4g}: {top:g} lengthscales are {top * ls:.3g} in data "
                    f"units, where squared distances leave float64's range; use {key} <= "
                    f"{MAX_ABS_VALUE / ls:.3g}")

        def finite(scale, key):
            c = replace(cfg, **{key: [v * scale for v in getattr(cfg, key)]})
            try:
                return all(t is None or math.isfinite(t)
                           for t in _theory(ctx, *_pairs(ctx, c)[:2]))
            except RangeError:  # (estimate_mse refuses a result beyond float64's range)
                return False

        for key in ("sums", "distances"):
            if not finite(1.0, key):
                lo, hi = 0.0, 1.0  # the largest scale of this key's values that stays finite
                for _ in range(60):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if finite(mid, key) else (lo, mid)
                top = max(getattr(cfg, key))
                raise ConfigError(
                    f"measure.variance.{key}={getattr(cfg, key)} is not allowed with features="
                    f"{ctx.map_cls.name} and kernel={ctx.kernel.name}: the exact mean squared "
                    f"error overflows float64 above |x {'+' if key == 'sums' else '-'} y| = "
                    f"{lo * top:.4g} lengthscales "
                    f"(the estimate's variance is then beyond any number of redraws); use "
                    f"{key} <= {lo * top:.4g}")

    def needs(self, ctx, cfg):
        """The map fitted once per redraw and the features of the pairs (2 rows each)."""
        d, it = ctx.data.d, ctx.itemsize
        rkey, nkey = "measure.variance.redraws", "measure.variance.n_pairs"
        keys = {"D": (ctx.cfg.D, 1), rkey: (cfg.redraws, 2)}
        if cfg.pairs == "data":
            keys[nkey] = (cfg.n_pairs, 1)

        def nbytes(v):
            n = 2 * (v[nkey] if cfg.pairs == "data" else len(cfg.distances) * len(cfg.sums))
            return 8.0 * (n * d + 4 * n * v[rkey]) \
                + ctx.map_cls.memory_bytes(n, d, v["D"], it, train_rows=ctx.n_train,
                                           **ctx.map_params)

        return [Need("the variance measurement (the map and the features of the pairs, the "
                     "estimates of every redraw)", nbytes, keys)]

    def run(self, ctx, cfg):
        X, Y, rm, rp = _pairs(ctx, cfg)
        n = X.shape[0]
        kernel = ctx.kernel
        P = np.vstack([X, Y]).astype(ctx.cfg.dtype)
        exact = np.array([kernel.gram(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(n)])
        R = cfg.redraws
        est = np.empty((R, n))
        seeds = redraw_seeds(ctx.cfg.seed, R, 0x7A91)
        log.info("variance: %d redraws of %s (D=%d) at %d pairs (%s)", R, ctx.map_cls.name,
                 ctx.cfg.D, n, cfg.pairs)
        progress = Progress("variance", R, "redraws")
        for r, seed in enumerate(seeds):
            fmap = ctx.make_map(seed=seed if r == 0 else np.random.default_rng(seed))
            fmap.fit(ctx.fit_rows)
            Z = fmap.transform(P)
            Z = np.asarray(Z.toarray() if hasattr(Z, "toarray") else Z, dtype=np.float64)
            est[r] = np.einsum("ij,ij->i", Z[:n], Z[n:]) + getattr(fmap, "kernel_offset_", 0.0)
            progress.step()
        sq = (est - exact) ** 2
        mse = sq.mean(axis=0)
        se = sq.std(axis=0, ddof=1) / math.sqrt(R)
        warped = bool(getattr(kernel, "warps", False))
        theo = _theory(ctx, X, Y)
        why = ("the kernel is shift-invariant in warped coordinates: no formula here" if warped
               else f"no formula for features={ctx.map_cls.name} with kernel={kernel.name}")
        source = ctx.map_cls.exact_mse_source()
        dist = np.linalg.norm(X - Y, axis=1)
        rows = []
        where = (f"|x + y| = {{:.3g}} l, |x - y| = {{:.3g}} l; {R} redraws; spread: the standard "
                 "error of the mean squared error")
        over = "not a finite number in float64 (the exact MSE overflows at this pair)"
        for i in range(n):
            rows.append(record("variance", "mse_empirical", mse[i], method="empirical",
                               spread=se[i], n_repeats=R, dist=dist[i],
                               note=where.format(rp[i], rm[i])))
            rows.append(record("variance", "mse_theory", theo[i] if theo[i] is None or
                               math.isfinite(theo[i]) else None, method="theory", dist=dist[i],
                               note=why if theo[i] is None else over if not math.isfinite(
                                   theo[i]) else f"exact ({source})"))
        se_mean = math.sqrt(np.sum(se ** 2)) / n
        rows.append(record("variance", "mse_mean", float(mse.mean()), method="empirical",
                           spread=se_mean, n_repeats=R,
                           note=f"mean over the {n} pairs ({cfg.pairs}); spread: its standard "
                                "error"))
        has_theory = all(t is not None and math.isfinite(t) for t in theo)
        why = why if any(t is None for t in theo) else over
        rows.append(record("variance", "mse_mean", float(np.mean(theo)) if has_theory else None,
                           method="theory",
                           note=f"mean over the {n} pairs of the exact MSE ({source})"
                           if has_theory else why))
        ctx.tables[VARIANCE_FILE] = pairs_table(rm, rp, dist, exact, est.mean(axis=0), mse, se,
                                                theo)
        return rows
