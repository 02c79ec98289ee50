"""Bound tightness: the observed sup error over redraws of the map against every
published bound (docs/theory.md, sections 2-3).

For one run:

1. **M and its constants.**  M = ``n_points`` training points (a seeded
   subsample, :mod:`rffbench.measure.points`).  ``diam`` is recorded as the
   exact max pairwise distance of the points (method ``empirical``) and, for
   data with a known support (the unstandardised synthetic ball: 2 r), the
   true one (method ``domain``); ``measure.bounds.diameter`` picks the one the
   bounds use (``auto``: domain when known) and every bound's note says which.
   ``sigma_p2`` = E||w||^2 (inf for heavy-tailed spectral densities); d and
   the number of frequencies are the identity columns ``d`` and ``n_freq``.
2. **Observed error.**  ``trials`` independent redraws of the map (seeds
   spawned from the run seed: reproducible and independent of the thread
   count); per trial the max over all pairs of M, diagonal included, of
   |z(x).z(y) - k(x, y)|.  Trials run in parallel, one per thread, each with
   one BLAS and one numba thread, each holding one n x n buffer for the estimate
   Z Z^T + c (numpy calls syrk for ``Z @ Z.T``; c is the map's ``kernel_offset_``)
   besides the shared exact K.
   ``eps_empirical`` (method ``empirical``) is the (1 - delta) quantile over
   trials (numpy's linear interpolation); ``empirical_mean`` and
   ``empirical_max`` are the mean and the max.  When M stands for the ball,
   the max over sampled points is a lower bound on the sup over the ball.
3. **Pointwise check.**  ``pairs`` fixed pairs of M at distance quantiles
   0, ..., 1 of the distinct pairs (column ``dist`` = ||x - y||): the variance
   of the estimate over the trials (``spread`` = its standard error) against
   the exact variance, and the (1 - delta) quantile of |error| against
   Hoeffding and Bernstein.
4. **Bounds** (:func:`rffbench.theory.uniform_bounds`), each inverted to
   eps_bound(delta) by bisection; ``tightness`` = eps_bound / eps_empirical
   (< 1: the bound is violated or mis-implemented: warned and noted, never
   clipped); ``D_required`` = the D at which the bound gives eps_empirical.
   A bound that does not apply has an empty value and the reason in ``note``.

Per-trial values go to ``bounds_trials.csv`` next to records.csv (one row per
trial and quantity: the sup, and the signed error of each fixed pair), so the
report can draw the empirical tail P[sup >= eps].
"""
from __future__ import annotations

import logging
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional

import numba
import numpy as np
from scipy.spatial.distance import pdist
from threadpoolctl import threadpool_limits

from .. import _numba as nbk
from .. import theory
from ..checks import N_POINTS, Check, Int, OneOf, Real, check_constraints
from ..clock import attempt
from ..errors import ConfigError
from ..features import gram_of
from ..kernels import KERNELS, Kernel
from ..memory import Need
from ..progress import Progress
from ..registry import unimplemented
from ..results import TRIALS_FILE, record
from .approximation import VARIANCE_TERMS
from .base import Measurement
from .points import resolve_n_points, sample_points

log = logging.getLogger(__name__)

BLOCK_ROWS = 512
#: D_required is searched up to this output dimension
D_SEARCH_MAX = 1e18


BOUNDS_DIAMETERS = ("auto", "points", "domain")


def _deltas_ok(v):
    deltas = v if isinstance(v, (list, tuple)) else [v]
    return len(deltas) >= 1 and all(Real(gt=0, lt=1).ok(a) for a in deltas) \
        and len(set(deltas)) == len(deltas)  # each delta's records once


@dataclass
class BoundsConfig:
    """measure.bounds: observed sup error over redraws of the map vs published bounds."""

    enabled: bool = True
    #: independent redraws of the map (>= 2)
    trials: int = 100
    #: points of the set M (at most the training-set size); null = min(300, n_train)
    n_points: Optional[int] = None
    #: failure probability, or a list of them, each in (0, 1)
    delta: Any = field(default_factory=lambda: [0.05])
    #: fixed pairs of M (spanning small to large distance) for the pointwise check
    pairs: int = 5
    #: diam(M) the bounds use: points = max pairwise distance of the points,
    #: domain = the data's true support (synthetic ball: 2 r), auto = domain if known
    diameter: str = "auto"

    DEFAULT_N_POINTS = 300

    constraints = {
        "trials": Int(2), "n_points": N_POINTS,
        "delta": Check(_deltas_ok, "use a number in (0, 1) or a list of distinct ones, e.g. "
                                   "[0.05,0.01]", [0, 1, 1.5, [], [0.1, 0], [0.5, 0.5], "x", None]),
        "pairs": Int(1), "diameter": OneOf(BOUNDS_DIAMETERS),
    }

    def __post_init__(self):
        check_constraints(self, "measure.bounds")
        deltas = self.delta if isinstance(self.delta, (list, tuple)) else [self.delta]
        self.delta = sorted({float(v) for v in deltas}, reverse=True)


def _workers(ctx, cfg):
    """Trials run at once: one per thread on the CPU; one at a time with device=cuda (the
    GPU takes the transforms in turn on its one stream anyway, and numba's CUDA simulator
    swaps a kernel module's globals while a kernel runs: launches from two threads break
    it)."""
    if ctx.device != "cpu":
        return 1
    return max(1, min(ctx.threads, cfg.trials))


def condensed_to_ij(c, n):
    """Row and column (i < j) of entries ``c`` of scipy's condensed distance vector."""
    c = np.asarray(c, dtype=np.int64)
    i = (n - 2 - np.floor(np.sqrt(-8.0 * c + 4.0 * n * (n - 1) - 7.0) / 2.0 - 0.5)).astype(np.int64)
    j = c + i + 1 - n * (n - 1) // 2 + (n - i) * (n - i - 1) // 2
    return i, j


def pick_pairs(dists, n, n_pairs):
    """Indices (I, J) of distinct pairs whose distances sit at the quantiles
    0, 1/(P-1), ..., 1 of the positive pairwise distances ``dists`` (condensed)."""
    pos = np.flatnonzero(dists > 0)
    if pos.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    targets = np.quantile(dists[pos], np.linspace(0.0, 1.0, n_pairs) if n_pairs > 1 else [0.5])
    picked = []
    for t in targets:
        c = int(pos[np.argmin(np.abs(dists[pos] - t))])
        if c not in picked:
            picked.append(c)
    return condensed_to_ij(picked, n)


# --------------------------------------------------------------------------
# trials
# --------------------------------------------------------------------------
def _parallel_layer_ok():
    """Concurrent calls into numba's parallel functions need a threadsafe layer."""
    try:
        return numba.threading_layer() in ("omp", "tbb")
    except ValueError:  # no parallel function has run yet
        return False


def run_trials(make_map, X_fit, M, K, I, J, seeds, workers):
    """Per trial: max_{i<=j} |Z Z^T + c - K| (c the map's kernel_offset_) and the signed
    errors at the pairs (I, J).

    ``make_map(rng)`` returns an unfitted map; each trial fits it on ``X_fit``
    (the training set: data-dependent maps such as Nystrom draw from it) with
    ``np.random.default_rng(seed)`` and maps M.  Every trial runs with one BLAS and one
    numba thread, so the result does not depend on ``workers``.
    """
    T, n = len(seeds), M.shape[0]
    sup = np.empty(T)
    pointwise = np.empty((T, len(I)))
    local = threading.local()
    progress = Progress("bounds", T, "trials")

    def one(t):
        G = getattr(local, "G", None)
        if G is None:
            numba.set_num_threads(1)  # thread-local
            G = local.G = np.empty((n, n), dtype=M.dtype)
        fmap = make_map(np.random.default_rng(seeds[t])).fit(X_fit)
        gram_of(fmap.transform(M), out=G)
        c = getattr(fmap, "kernel_offset_", 0.0)  # a quadrature rule's centre term
        if c:
            G += c
        sup[t] = nbk.max_abs_diff_upper(G, K)
        pointwise[t] = G[I, J] - K[I, J]
        progress.step()

    prev = numba.get_num_threads()
    try:
        with threadpool_limits(limits=1):
            if workers == 1:
                for t in range(T):
                    one(t)
            else:
                with ThreadPoolExecutor(workers, thread_name_prefix="rffbench-trial") as ex:
                    list(ex.map(one, range(T)))
    finally:
        numba.set_num_threads(prev)
    return sup, pointwise


def sample_variance_se(x):
    """(sample variance, its standard error) of the columns of x (T x P)."""
    T = x.shape[0]
    c = x - x.mean(axis=0)
    s2 = np.sum(c * c, axis=0) / (T - 1)
    m4 = np.mean(c**4, axis=0)
    se = np.sqrt(np.maximum(m4 - s2 * s2 * (T - 3) / (T - 1), 0.0) / T)
    return s2, se


# --------------------------------------------------------------------------
# bounds -> records
# --------------------------------------------------------------------------
def bound_records(b, deltas, D, eps_emp, family, prefix="", dist=None):
    """eps_bound, tightness and D_required of one bound, for every delta.

    ``eps_emp[delta]`` is the observed (1 - delta) quantile the bound is set
    against; ``dist`` is set for the pointwise check of one pair."""
    rows = []
    trivial = theory.TRIVIAL_ERROR.get(family, math.inf)
    for delta in deltas:
        common = dict(method=b.method, delta=delta, dist=dist)
        if b.prob is None:
            rows += [record("bounds", m, None, note=b.note, **common)
                     for m in ("eps_bound", "tightness", "D_required")]
            continue
        eps_b = theory.invert_bound(lambda e: b.prob(e, D), delta)
        if eps_b > b.eps_max:
            why = f"{b.eps_max_note}, but eps_bound = {eps_b:.4g}"
            rows += [record("bounds", m, None, note=why, **common)
                     for m in ("eps_bound", "tightness", "D_required")]
            continue
        note = prefix + b.note
        if eps_b >= trivial:
            note += f"; vacuous: above the largest possible error {trivial:g}"
        rows.append(record("bounds", "eps_bound", eps_b, note=note, **common))
        e = eps_emp[delta]
        ratio = eps_b / e if e > 0 else None
        tnote = "eps_bound / eps_empirical"
        if ratio is not None and ratio < 1:
            if b.uniform or dist is not None:
                where = "" if dist is None else f" at the pair with |x - y| = {dist:.4g}"
                tnote = (f"VIOLATED: eps_bound {eps_b:.4g} < eps_empirical {e:.4g}{where} "
                         "(bound invalid or mis-implemented, or sampling noise of the quantile)")
                log.warning("bounds: %s at delta=%g%s: %s", b.method, delta, where, tnote)
            else:
                tnote += "; a pointwise reference line below the sup: expected, not a violation"
        rows.append(record("bounds", "tightness", ratio, note=tnote, **common))
        if e <= 0 or e > b.eps_max:
            rows.append(record("bounds", "D_required", None, note=(
                b.eps_max_note if e > 0 else "eps_empirical = 0"), **common))
            continue
        try:
            d_req = math.ceil(theory.invert_bound(lambda x: b.prob(e, x), delta, lo=1.0,
                                                  hi=D_SEARCH_MAX))
            dnote = f"D for eps = eps_empirical at this delta; D used: {D}"
        except ValueError:
            d_req, dnote = None, f"no D up to {D_SEARCH_MAX:g} reaches eps_empirical"
        rows.append(record("bounds", "D_required", d_req, note=dnote, **common))
    return rows


def trials_table(sup, pointwise, pair_dist, k_pair):
    """Long per-trial table: quantity ``sup`` (max |error| over M) and ``pair``
    (signed error at fixed pair ``pair``, distance ``dist``, exact ``k``)."""
    import pandas as pd

    T, P = pointwise.shape
    trial = np.arange(T)
    parts = [pd.DataFrame(dict(trial=trial, quantity="sup", pair=-1, dist=np.nan, k=np.nan,
                               error=sup))]
    for p in range(P):
        parts.append(pd.DataFrame(dict(trial=trial, quantity="pair", pair=p, dist=pair_dist[p],
                                       k=k_pair[p], error=pointwise[:, p])))
    return pd.concat(parts, ignore_index=True)



def _constants(ctx, cfg, n, diam_pts):
    """Step 1 of :meth:`Bounds.run`: the records of M's diameter (empirical, and the
    domain's where the data has one) and of sigma_p^2; (rows, diam, where it comes from,
    whether it is the domain's, sigma_p^2)."""
    kernel, d = ctx.kernel, ctx.data.d
    rows = []
    use_domain = ctx.data.diameter is not None and cfg.diameter in ("auto", "domain")
    diam = float(ctx.data.diameter) if use_domain else diam_pts
    src = "true diameter of the data's support" if use_domain \
        else f"max pairwise distance of the {n} points"
    rows.append(record("bounds", "diam", diam_pts, method="empirical",
                       note=f"max pairwise distance of the {n} points"
                       + ("" if use_domain else "; used by the bounds")))
    if ctx.data.diameter is not None:
        rows.append(record("bounds", "diam", ctx.data.diameter, method="domain",
                           note="true diameter of the support (synthetic ball: 2 r)"
                           + ("; used by the bounds" if use_domain else "")))
    if kernel.shift_invariant:
        sigma_p2 = kernel.sigma_p2(d)
        rows.append(record("bounds", "sigma_p2", sigma_p2, infinite=True, note=(
            f"E||w||^2 of {kernel.describe()} in d={d}" if math.isfinite(sigma_p2) else
            f"E||w||^2 = inf for {kernel.describe()}: heavy-tailed spectral density")))
    else:
        sigma_p2 = math.nan
        rows.append(record("bounds", "sigma_p2", None, note=(
            f"kernel={kernel.name} is not shift-invariant: no spectral density")))
    return rows, diam, src, use_domain, sigma_p2


def _pointwise_rows(ctx, cfg, M64, W64, k_pair, I, J, pair_dist, pointwise):
    """Step 3 of :meth:`Bounds.run`: per pair of M, the empirical variance of the error
    over the trials, the variance formula of the map's family (or the map's own), the
    (1 - delta) quantiles of |error| and the pointwise bounds."""
    kernel, D, deltas = ctx.kernel, ctx.cfg.D, cfg.delta
    fam, map_name = ctx.map_cls.tags.variance, ctx.map_cls.name
    rows = []
    # k(2 delta) enters the variance formulas, which hold for shift-invariant kernels only
    k2_pair = kernel.k_of_delta(2.0 * (W64[I] - W64[J])) if kernel.shift_invariant \
        else np.full(len(I), np.nan)
    var_emp, var_se = sample_variance_se(pointwise)
    for p in range(len(I)):
        dist = float(pair_dist[p])
        kk, k2 = float(k_pair[p]), float(k2_pair[p])
        rows.append(record("bounds", "variance_empirical", var_emp[p], method="empirical",
                           spread=var_se[p], n_repeats=cfg.trials, dist=dist,
                           note="sample variance over trials; spread = its standard error"))
        if fam in VARIANCE_TERMS:
            rows.append(record("bounds", "variance_theory", VARIANCE_TERMS[fam](kk, k2) / D,
                               method="theory", dist=dist,
                               note=f"exact (Sutherland & Schneider), k={kk:.4g}, "
                                    f"k(2 delta)={k2:.4g}"))
        else:  # a map's own formula (positive, maclaurin, the linear sketches), if any
            own = ctx.map_cls.exact_mse(kernel, M64[I[p]], M64[J[p]], D,
                                       **ctx.cfg.features.map_params())
            rows.append(record(
                "bounds", "variance_theory", own, method="theory", dist=dist,
                note=(f"exact ({ctx.map_cls.exact_mse_source()}), k={kk:.4g}"
                      if own is not None else
                      f"no exact variance formula for features={map_name}")))
        abs_err = np.abs(pointwise[:, p])
        eps_pair = {delta: float(np.quantile(abs_err, 1.0 - delta)) for delta in deltas}
        for delta in deltas:
            rows.append(record("bounds", "eps_empirical", eps_pair[delta], method="empirical",
                               n_repeats=cfg.trials, delta=delta, dist=dist,
                               note="(1 - delta) quantile of |error| at one pair over trials"))
        for b in theory.pointwise_bounds(fam, kk, k2, map_name):
            rows += bound_records(b, deltas, D, eps_pair, fam, dist=dist)
    return rows


class Bounds(Measurement):
    """Observed sup error over redraws of the map against every published bound that applies."""

    name = "bounds"
    Config = BoundsConfig

    def check(self, ctx, cfg):
        n, _ = resolve_n_points(ctx, "bounds", cfg)
        kcls = KERNELS[ctx.cfg.kernel.name]
        lacks = unimplemented(kcls, Kernel, [("sigma_p2",), ("k_of_delta",)]) \
            if kcls.shift_invariant else []
        if lacks:  # a plug-in kernel without its spectral constants
            raise ConfigError(f"measure.bounds.enabled=true is not allowed with kernel="
                              f"{ctx.cfg.kernel.name}: the bounds need the kernel's "
                              f"{' and '.join(a[0] for a in lacks)}, which it does not "
                              "implement; set measure.bounds.enabled=false")
        if cfg.diameter == "domain" and ctx.data.diameter is None:
            raise ConfigError(f"measure.bounds.diameter='domain' is not allowed for "
                              f"dataset={ctx.data.name}: its support's diameter is unknown (known "
                              "for the unstandardised synthetic ball); use points or auto")

    def needs(self, ctx, cfg):
        """K, one Z Z^T buffer and one fitted map with its Z per worker, the condensed
        distances, a k(2 delta) block, and per trial its seed and results."""
        n, _ = resolve_n_points(ctx, "bounds", cfg)
        w, d, it = _workers(ctx, cfg), ctx.data.d, ctx.itemsize
        key, tkey = "measure.bounds.n_points", "measure.bounds.trials"
        pkey = "measure.bounds.pairs"

        def nbytes(v):
            m, D, T = v[key], v["D"], v[tkey]
            return 8.0 * (m * m * (1 + w) + m * m / 2 + BLOCK_ROWS * m + m * d) \
                + w * ctx.map_cls.memory_bytes(m, d, D, it, train_rows=ctx.n_train,
                                               **ctx.map_params) \
                + T * (512.0 + 8.0 * (v[pkey] + 1))

        return [Need(f"the bounds measurement ({1 + w} n_points x n_points matrices, {w} map(s) "
                     "at a time)", nbytes, {key: (n, 2), "D": (ctx.cfg.D, 1),
                                            tkey: (cfg.trials, 2), pkey: (cfg.pairs, 1)})]


    # --------------------------------------------------------------------------
    # the set M
    # --------------------------------------------------------------------------

    def run(self, ctx, cfg):
        n, m_note = resolve_n_points(ctx, "bounds", cfg)
        M = sample_points(ctx, "bounds", n)
        M64 = np.asarray(M, dtype=np.float64)
        kernel, D, d = ctx.kernel, ctx.cfg.D, ctx.data.d
        fam, map_name = ctx.map_cls.tags.variance, ctx.map_cls.name
        deltas = cfg.delta

        # 1. M and its constants
        W64 = np.asarray(kernel.warp(M64), dtype=np.float64)  # where the kernel is shift-invariant
        dists = pdist(W64)
        rows, diam, src, use_domain, sigma_p2 = _constants(ctx, cfg, n, float(dists.max()))

        # exact K on M; worst-case term variance over the pairs of M (Bernstein reference)
        K = kernel.gram(M64)
        v_max = None
        if fam in theory.TRIVIAL_ERROR:
            v_max = 0.0
            for s in range(0, n, BLOCK_ROWS):
                K2 = kernel.gram_twice(M64[s:s + BLOCK_ROWS], M64)
                v_max = max(v_max, float(np.max(theory.term_variance(
                    K[s:s + BLOCK_ROWS], K2, fam == "pairs"))))
        I, J = pick_pairs(dists, n, cfg.pairs)
        del dists
        pair_dist = np.linalg.norm(W64[I] - W64[J], axis=1)

        # 2. trials
        workers = _workers(ctx, cfg) if _parallel_layer_ok() else 1
        seeds = np.random.SeedSequence([ctx.cfg.seed, 0xB0D5]).spawn(cfg.trials)
        log.info("bounds: %d redraws of %s (D=%d) on M = %d points, %d worker thread(s)",
                 cfg.trials, map_name, D, n, workers)
        def trials(which):
            return run_trials(lambda rng: ctx.make_map(seed=rng), ctx.fit_rows, M, K, I, J,
                              which, workers)

        trials(seeds[:1])  # numba's code compiled (or loaded from its cache) before timing
        (sup, pointwise), took = attempt(lambda: trials(seeds), what="bounds trials")
        if took.disturbed:  # the trials' values stand; their time included numba's compiler
            wall_note = "time not given: numba compiled during the trials"
        else:
            wall_note = f"{took.seconds:.3g} s"
            log.info("bounds: %d trials in %.3g s (%.1f GFLOP/s as a full n x n x D GEMM per "
                     "trial)", cfg.trials, took.seconds,
                     2.0 * n * n * D * cfg.trials / took.seconds / 1e9)
        eps_emp = {delta: float(np.quantile(sup, 1.0 - delta)) for delta in deltas}
        few = [dl for dl in deltas if cfg.trials * dl < 1]
        trial_note = (f"over {cfg.trials} trials of the max over the {n * (n + 1) // 2} pairs of M "
                      f"({m_note})"
                      f"{'; a lower bound on the sup over the ball' if use_domain else ''}")
        for delta in deltas:
            q_note = f"(1 - delta) quantile {trial_note}"
            if delta in few:
                q_note += (f"; fewer than 1/delta = {1 / delta:g} trials: the quantile is the "
                           "sample top")
            rows.append(record("bounds", "eps_empirical", eps_emp[delta], method="empirical",
                               n_repeats=cfg.trials, delta=delta, note=q_note))
        rows.append(record("bounds", "eps_empirical", float(sup.mean()), method="empirical_mean",
                           n_repeats=cfg.trials, note=f"mean {trial_note}"))
        rows.append(record("bounds", "eps_empirical", float(sup.max()), method="empirical_max",
                           n_repeats=cfg.trials, note=f"max {trial_note}; {wall_note}"))

        # 3. pointwise check
        k_pair = K[I, J]
        rows += _pointwise_rows(ctx, cfg, M64, W64, k_pair, I, J, pair_dist, pointwise)

        # 4. uniform bounds
        prefix = f"diam={diam:.4g} ({src}); "
        for b in theory.uniform_bounds(fam, d, sigma_p2, diam, v_max=v_max if v_max else 1.0,
                                       k_absmax=1.0, map_name=map_name):
            rows += bound_records(b, deltas, D, eps_emp, fam, prefix=prefix if b.uniform else "")

        ctx.tables[TRIALS_FILE] = trials_table(sup, pointwise, pair_dist, k_pair)
        return rows
