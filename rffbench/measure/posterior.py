"""Gaussian-process posterior samples from random features, against the exact posterior.

The closed forms are :mod:`rffbench.posterior` (docs/theory.md, "Posterior samples"): each
sampler's draws at the test points are Gaussian given the map's features, so their
distance from the exact posterior is computed, not sampled.

The problem: ``n_train`` training points X (a seeded subsample of the training rows), noise
variance ``noise`` and targets y: ``targets=prior`` (the default, Wilson et al.'s protocol)
draws y = f(X) + e from the exact GP prior with that noise (seeded); ``targets=data`` takes
the data's regression targets, centred on their mean (the GP's prior mean is 0).  The
exact posterior at ``n_test`` test points X_s (a seeded subsample of the test rows) has mean
mu and covariance Sigma, by Cholesky of K + noise I (past CHOLESKY_MAX training points by
preconditioned conjugate gradients, K never stored).  For each of ``redraws`` independent
draws of the map (the run seed's, then seeds spawned from it):

* ``weight_space``: Bayesian linear regression on the map's features, with D + n features
  (``weight_space_features=matched``, Wilson et al.'s matched cost: the decoupled sampler
  pays D features and an n-point update; rounded up to the next size the map takes) or D
  (``same``);
* ``decoupled``: the pathwise (Matheron) sampler: its prior from the map's D features, its
  update from the exact kernel.

Records per sampler (method: the sampler), each the mean over the redraws (spread: their
standard deviation, n_repeats: R):

* ``w2``: the 2-Wasserstein distance between the sampler's Gaussian and the exact posterior;
* ``mean_rmse``: the RMS over the test points of its mean's error (the decoupled sampler's
  mean is the exact one for every map: rounding);
* ``cov_rel_fro_error``: ||C - Sigma||_F / ||Sigma||_F;
* ``starvation_ratio``: the sampler's variance over the exact one, averaged over the
  ``far_fraction`` of the test points where the exact posterior keeps most of its prior
  variance (far from the data): below 1 is variance starvation;
* decoupled only, ``expected_cov_rel_fro_error``: sqrt(E ||C - Sigma||_F^2) / ||Sigma||_F
  over draws of the map, for a map of i.i.d. frequencies (variance family ``rff`` or
  ``pairs``).  C - Sigma = B (G - K) B^T is linear in the Gram error, so the expectation is
  (E_w ||B g_w B^T||_F^2 - ||B K B^T||_F^2) / (number of frequencies), g_w the Gram of one
  frequency; E_w is a Monte Carlo mean over ``expectation_frequencies`` frequencies of the
  map's own family (spread: its standard error).  Other maps: n/a, said so.

And (method ``exact``): ``far_variance_fraction`` (the exact posterior variance over the prior
variance at those far points), ``posterior_sd_rms`` (sqrt(tr Sigma / m), the scale a W2
is measured against), ``n_conditioned`` and ``n_test_points`` (n and m: the report's x
axis, whichever key set them).  Every redraw's values go to ``posterior_redraws.csv``.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .. import posterior as gp
from ..checks import Int, OneOf, Real, check_constraints
from ..errors import ConfigError, RangeError
from ..memory import Need
from ..progress import Progress
from ..results import POSTERIOR_FILE, record
from .base import Measurement
from .points import redraw_seeds, sample_index

log = logging.getLogger(__name__)

SAMPLERS = ("weight_space", "decoupled")
METRICS = ("w2", "mean_rmse", "cov_rel_fro_error", "starvation_ratio")
TARGETS = ("prior", "data")
WEIGHT_SPACE_FEATURES = ("matched", "same")
#: the exact posterior is a Cholesky of K + noise I up to this many training points; past
#: it, preconditioned conjugate gradients (rffbench.exact.pcg) with the test points' kernel
#: columns as right-hand sides, never storing K
CHOLESKY_MAX = 10000
#: cg's relative residual per column, its iterations and its Nystrom preconditioner's rank
#: (None: rffbench.exact.default_rank, min(n, 2000)), past CHOLESKY_MAX
CG_TOL, CG_MAX_ITER, CG_RANK = 1e-8, 2000, None
#: frequencies per block of the expectation's Monte Carlo
EXPECTATION_BLOCK = 512
#: feature columns per i.i.d. frequency of a variance family
GROUP = {"rff": 1, "pairs": 2}


@dataclass
class PosteriorConfig:
    """measure.posterior: GP posterior samples from the map's features (weight-space and
    decoupled samplers) against the exact posterior (off by default)."""

    enabled: bool = False
    #: the observation noise variance (> 0)
    noise: float = 1e-3
    #: training points the posterior conditions on; null = min(1000, n_train)
    n_train: Optional[int] = None
    #: test points the samplers are compared at; null = min(1000, n_test)
    n_test: Optional[int] = None
    #: prior: targets drawn from the exact GP prior (+ noise); data: the data's regression
    #: targets, centred
    targets: str = "prior"
    #: independent draws of the map: the records hold their mean (spread: their sd)
    redraws: int = 1
    #: matched: the weight-space sampler gets D + n_train features (the decoupled one's
    #: cost); same: D
    weight_space_features: str = "matched"
    #: the share of the test points, farthest from the data by their exact posterior
    #: variance, the starvation ratio is taken over
    far_fraction: float = 0.1
    #: frequencies of the Monte Carlo of the decoupled sampler's expected error
    expectation_frequencies: int = 4096

    #: n_train and n_test when null (capped at the rows there are)
    DEFAULT_POINTS = 1000

    constraints = {
        "noise": Real(gt=0, text="use a number > 0 (the noise variance; the exact posterior "
                                 "needs K + noise I positive definite)"),
        "n_train": Int(1, none=True, text="use an integer >= 1 or null (min(1000, n_train))"),
        "n_test": Int(1, none=True, text="use an integer >= 1 or null (min(1000, n_test))"),
        "targets": OneOf(TARGETS), "redraws": Int(1),
        "weight_space_features": OneOf(WEIGHT_SPACE_FEATURES),
        "far_fraction": Real(gt=0, le=1), "expectation_frequencies": Int(2),
    }

    def __post_init__(self):
        check_constraints(self, "measure.posterior")


def _sizes(ctx, cfg):
    """(n, m): the training and test points; ConfigError naming the key if impossible."""
    out = []
    for key, part in (("n_train", ctx.data.X_train), ("n_test", ctx.data.X_test)):
        have, v = part.shape[0], getattr(cfg, key)
        what = "training" if key == "n_train" else "test"
        if v is None:
            v = min(cfg.DEFAULT_POINTS, have)
        elif v > have:
            raise ConfigError(f"measure.posterior.{key}={v} is not allowed: dataset="
                              f"{ctx.data.name} has {have} {what} points; use 1..{have} or null")
        if v < 1:
            raise ConfigError(f"measure.posterior.{key}=null is not allowed here: dataset="
                              f"{ctx.data.name} has no {what} points")
        out.append(v)
    if out[0] > CHOLESKY_MAX and cfg.targets == "prior":
        raise ConfigError(f"measure.posterior.n_train={out[0]} is not allowed with targets=prior:"
                          f" a draw from the prior needs a Cholesky factor of K + noise I, made "
                          f"up to {CHOLESKY_MAX} training points (past it use targets=data: the "
                          "posterior is then solved by conjugate gradients)")
    return tuple(out)


def weight_space_size(ctx, cfg, n):
    """The weight-space sampler's number of features: D, or (matched) the first size from
    D + n on that the run's map takes on this data (ssr: a multiple of 2 (d + 1);
    ConfigError if none up to twice that)."""
    D = ctx.cfg.D
    if cfg.weight_space_features == "same":
        return D
    params = ctx.cfg.features.map_params()
    last = None
    for size in range(D + n, 2 * (D + n) + 1):
        try:
            ctx.map_cls.check_params(size, kernel=ctx.kernel, **params)
            ctx.map_cls.check_data(size, ctx.n_train, ctx.data.d, **ctx.map_params)
            return size
        except ConfigError as exc:
            last = exc
    raise ConfigError(f"measure.posterior.weight_space_features=matched is not allowed with "
                      f"features={ctx.map_cls.name}: it takes no size from D + n_train = {D + n} "
                      f"to {2 * (D + n)} ({last}); use same")


def problem(ctx, cfg):
    """(idx, Xn, Xs): the training points (and their indices in the training rows) and the
    test points."""
    n, m = _sizes(ctx, cfg)
    idx = sample_index(ctx, "posterior-train", n, ctx.n_train)
    test = sample_index(ctx, "posterior-test", m, ctx.data.X_test.shape[0])
    return (idx, np.asarray(ctx.data.X_train[idx], dtype=np.float64),
            np.asarray(ctx.data.X_test[test], dtype=np.float64))


def targets(ctx, cfg, ex, idx):
    """(y, note): the data's targets at the rows ``idx``, centred, or (targets=prior) a draw
    of f(X) + e from the GP prior: L z with L the Cholesky factor of K + noise I the exact
    posterior ``ex`` was solved with."""
    n = len(idx)
    if cfg.targets == "data":
        y = np.asarray(ctx.data.y_train[idx], dtype=np.float64)
        what = "the data's targets, centred"
        y = y - y.mean()
    else:  # (_sizes refuses prior past CHOLESKY_MAX: the factor is there)
        L, lower = ex.factor
        y = (np.tril(L) if lower else np.triu(L).T) @ ctx.rng("posterior-targets") \
            .standard_normal(n)
        what = "targets drawn from the GP prior with the noise"
    return y, (f"n = {n} training and m = {ex.cov.shape[0]} test points, noise variance "
               f"{cfg.noise:g}, {what}")


class Exact:
    """The exact posterior at the test points and what the samplers share: the update M,
    Sigma, the Cholesky factor of K + noise I (None past CHOLESKY_MAX), the prior variances
    and the far points; mu once :meth:`condition` is given the targets."""

    def __init__(self, kernel, Xn, Xs, noise, far_fraction):
        K_sn = kernel.gram(Xs, Xn).astype(np.float64)
        K_ss = kernel.gram(Xs).astype(np.float64)
        self.factor, self.mean = None, None
        if Xn.shape[0] <= CHOLESKY_MAX:
            K_nn = kernel.gram(Xn).astype(np.float64)
            try:
                self.M, self.factor = gp.update(K_nn, K_sn, noise)
            except RangeError:
                raise RangeError(f"K + noise I is not positive definite at measure.posterior."
                                 f"noise={noise:g}: the kernel's Gram is not (numerically) "
                                 "positive semi-definite; use a larger noise") from None
            self.cov = gp.exact_cov(K_sn, K_ss, self.factor)
        else:
            self.M, self.cov = _by_cg(kernel, Xn, K_sn, K_ss, noise)
        self.sqrt = gp.sqrt_psd(self.cov)
        self.prior_var = np.diag(K_ss).copy()
        self.var = np.clip(np.diag(self.cov), 0.0, None)
        frac = self.var / self.prior_var
        k = max(1, int(math.ceil(far_fraction * len(frac))))
        self.far = np.argsort(-frac, kind="stable")[:k]
        self.far_variance = float(frac[self.far].mean())
        self.fro = float(np.linalg.norm(self.cov))
        self.noise = noise

    def condition(self, y):
        """The posterior mean for the targets y: M y."""
        self.mean = self.M @ y

    def metrics(self, mean, cov):
        """The sampler's metrics against this posterior."""
        var = np.diag(cov)
        return dict(w2=gp.w2(mean, cov, self.mean, self.cov, self.sqrt),
                    mean_rmse=float(np.sqrt(np.mean((mean - self.mean) ** 2))),
                    cov_rel_fro_error=float(np.linalg.norm(cov - self.cov)) / self.fro,
                    starvation_ratio=float(np.mean(var[self.far] / self.var[self.far])))


def _by_cg(kernel, Xn, K_sn, K_ss, noise):
    """(M, cov) of the exact posterior past CHOLESKY_MAX training points: A = (K_nn +
    noise I)^-1 K_ns by preconditioned cg (one kernel product per iteration for all m
    columns), M = A^T, cov = K_ss - K_sn A; RangeError when cg does not converge."""
    from ..exact import cg_parts, pcg

    op, precond = cg_parts(kernel, Xn, precond_rank=CG_RANK, random_state=0)
    A, info = pcg(op, K_sn.T, noise, precond, tol=CG_TOL, max_iter=CG_MAX_ITER)
    if not info["converged"]:
        raise RangeError(f"the exact posterior at measure.posterior.n_train={Xn.shape[0]} "
                         f"(conjugate gradients past {CHOLESKY_MAX} training points) stopped at "
                         f"relative residual {info['residual']:.3g} > {CG_TOL:g} after "
                         f"{info['iterations']} iterations; use a larger measure.posterior.noise "
                         f"or n_train <= {CHOLESKY_MAX}")
    cov = K_ss - K_sn @ A
    return A.T, 0.5 * (cov + cov.T)


def dense_features(fmap, X):
    """The fitted map's features of X (in the run's dtype) in float64, dense, with a column
    sqrt(c) for a map's kernel_offset_ c > 0 (z.z' + c = [z, sqrt c].[z', sqrt c]);
    RangeError for c < 0 (no real feature adds it)."""
    Z = fmap.transform(X)
    Z = np.asarray(Z.toarray() if hasattr(Z, "toarray") else Z, dtype=np.float64)
    c = float(getattr(fmap, "kernel_offset_", 0.0))
    if c < 0:
        raise RangeError(f"features={fmap.name}: its estimate adds kernel_offset_={c:.4g} < 0, "
                         "which no feature vector gives: no sampler from its features")
    return np.hstack([Z, np.full((Z.shape[0], 1), math.sqrt(c))]) if c > 0 else Z


def draw(ctx, ex, Xn, Xs, y, seed, D_ws, noise):
    """({sampler: metrics}, {sampler: feature columns}) of one draw of the map (the
    decoupled sampler's D features, the weight-space sampler's D_ws from the same seed; the
    columns the map gives for them, with the offset's)."""
    out, widths = {}, {}
    for sampler, D in (("decoupled", ctx.cfg.D), ("weight_space", D_ws)):
        rng = seed if isinstance(seed, int) else np.random.default_rng(seed)
        fmap = ctx.make_map(seed=rng, D=D).fit(ctx.fit_rows)
        Z, Zs = (dense_features(fmap, X.astype(ctx.cfg.dtype, copy=False)) for X in (Xn, Xs))
        if sampler == "decoupled":
            mean, cov = gp.decoupled(Z, Zs, ex.M, y, noise)
        else:
            mean, cov = gp.weight_space(Z, Zs, y, noise)
        out[sampler], widths[sampler] = ex.metrics(mean, cov), Z.shape[1]
    return out, widths


def expected_error(ctx, cfg, ex, Xn, Xs):
    """(expected_cov_rel_fro_error, its Monte Carlo standard error, note) of the decoupled
    sampler (module docs), or (None, None, why)."""
    group = GROUP.get(ctx.map_cls.tags.variance)
    if group is None:
        return None, None, (f"no expectation: features={ctx.map_cls.name}'s frequencies are "
                            "not i.i.d. (only the rff and pairs variance families' are)")
    F = cfg.expectation_frequencies
    fmap = ctx.make_map(seed=ctx.rng("posterior-expectation"), D=group * F).fit(ctx.fit_rows)
    S = ex.cov - ex.noise * (ex.M @ ex.M.T)  # B K B^T
    Zn, Zs = (dense_features(fmap, X.astype(ctx.cfg.dtype, copy=False)) for X in (Xn, Xs))
    q = np.empty(F)
    for s in range(0, F, EXPECTATION_BLOCK):
        e = min(F, s + EXPECTATION_BLOCK)
        cols = np.r_[s:e] if group == 1 else np.r_[s:e, F + s:F + e]
        U = (Zs[:, cols] - ex.M @ Zn[:, cols]) * math.sqrt(F)  # B z_w, one frequency each
        if group == 1:
            q[s:e] = np.einsum("ij,ij->j", U, U) ** 2
        else:
            u, v = U[:, :e - s], U[:, e - s:]
            uu, vv, uv = (np.einsum("ij,ij->j", a, b) for a, b in ((u, u), (v, v), (u, v)))
            q[s:e] = uu ** 2 + vv ** 2 + 2 * uv ** 2
    freqs = ctx.cfg.D // group
    est = (q.mean() - float(np.sum(S * S))) / freqs
    se = q.std(ddof=1) / math.sqrt(F) / freqs
    value = math.sqrt(max(est, 0.0)) / ex.fro
    spread = se / (2 * math.sqrt(est)) / ex.fro if est > 0 else None
    return value, spread, (f"RMS over draws of the map: sqrt(E ||C - Sigma||_F^2) / "
                           f"||Sigma||_F, E over {freqs} i.i.d. frequencies by a Monte Carlo "
                           f"over {F} (spread: its standard error)")


def redraws_table(values):
    """Long per-redraw table: redraw, sampler, metric, value."""
    import pandas as pd

    return pd.DataFrame([dict(redraw=r, sampler=s, metric=m, value=v)
                         for r, per in enumerate(values) for s in SAMPLERS
                         for m, v in per[s].items()])


class Posterior(Measurement):
    """GP posterior samples from the map's features (weight-space and decoupled samplers)
    against the exact posterior: 2-Wasserstein distance, mean error, covariance error and
    variance starvation."""

    name = "posterior"
    Config = PosteriorConfig
    thread_dependent = {"*": "Cholesky factors, eigendecompositions and GEMMs whose summation "
                             "order depends on the thread count (relative differences "
                             "~1e-12; more where K + noise I is ill-conditioned)"}

    def check(self, ctx, cfg):
        n, _ = _sizes(ctx, cfg)
        if cfg.targets == "data" and ctx.data.task != "regression":
            raise ConfigError(f"measure.posterior.targets=data is not allowed with dataset="
                              f"{ctx.data.name}: its task is {ctx.data.task}, not regression "
                              "(use targets=prior)")
        weight_space_size(ctx, cfg, n)

    def needs(self, ctx, cfg):
        """K_nn and its factor (past CHOLESKY_MAX: cg's vectors and preconditioner), K_sn and
        M, seven m x m matrices (K_ss, Sigma, C, the W2's
        square roots and product), both samplers' features and the weight-space system, the
        expectation's block of features."""
        n, m = _sizes(ctx, cfg)
        d, it = ctx.data.d, ctx.itemsize
        nk, mk = "measure.posterior.n_train", "measure.posterior.n_test"
        F = cfg.expectation_frequencies

        def nbytes(v):
            n, m, D = v[nk], v[mk], v["D"]
            Dw = D + n if cfg.weight_space_features == "matched" else D
            # past CHOLESKY_MAX cg's vectors (5 x n x m) and its rank-2000 preconditioner
            exact = 2 * n * n if n <= CHOLESKY_MAX else 5 * n * m + 3 * n * min(n, 2000)
            return 8.0 * (exact + 3 * m * n + 7 * m * m + 2 * (n + m) * (D + Dw)
                          + 2 * Dw * Dw + Dw * m + 2 * (n + m) * 2 * F
                          + 4 * EXPECTATION_BLOCK * (n + m)) \
                + ctx.map_cls.memory_bytes(n + m, d, Dw, it, train_rows=ctx.n_train,
                                           **ctx.map_params)

        return [Need("the posterior measurement (the exact posterior's n x n and m x m "
                     "matrices, both samplers' features and covariances)", nbytes,
                     {nk: (n, 1), mk: (m, 1), "D": (ctx.cfg.D, 1)})]

    def run(self, ctx, cfg):
        idx, Xn, Xs = problem(ctx, cfg)
        n = Xn.shape[0]
        D_ws = weight_space_size(ctx, cfg, n)
        ex = Exact(ctx.kernel, Xn, Xs, cfg.noise, cfg.far_fraction)
        y, note = targets(ctx, cfg, ex, idx)
        ex.condition(y)
        R = cfg.redraws
        log.info("posterior: %s (D=%d; weight-space D=%d) vs the exact GP, %s, %d redraws",
                 ctx.map_cls.name, ctx.cfg.D, D_ws, note, R)
        progress = Progress("posterior", R, "redraws") if R > 1 else None
        seeds = redraw_seeds(ctx.cfg.seed, R, 0x9057)
        values = []
        for seed in seeds:
            per, widths = draw(ctx, ex, Xn, Xs, y, seed, D_ws, cfg.noise)
            values.append(per)
            if progress is not None:
                progress.step()
        rows = self._records(ctx, cfg, values, widths, D_ws, n, note)
        value, spread, why = expected_error(ctx, cfg, ex, Xn, Xs)
        rows.append(record("posterior", "expected_cov_rel_fro_error", value, method="decoupled",
                           spread=spread, note=why))
        far = (f"the {len(ex.far)} test points ({cfg.far_fraction:g} of them) where the exact "
               "posterior keeps most of its prior variance")
        rows.append(record("posterior", "far_variance_fraction", ex.far_variance,
                           method="exact", note=f"exact posterior over prior variance at {far}"))
        rows.append(record("posterior", "posterior_sd_rms",
                           math.sqrt(float(np.trace(ex.cov)) / Xs.shape[0]), method="exact",
                           note=f"sqrt(tr Sigma / m): the scale of a W2; {note}"))
        rows.append(record("posterior", "n_conditioned", n, method="exact",
                           note="training points the posterior conditions on"))
        rows.append(record("posterior", "n_test_points", Xs.shape[0], method="exact",
                           note="test points the samplers are compared at"))
        if R > 1:
            ctx.tables[POSTERIOR_FILE] = redraws_table(values)
        return rows

    def _records(self, ctx, cfg, values, widths, D_ws, n, note):
        """The samplers' records: each metric's mean over the redraws, the notes saying
        what each sampler was."""
        R = len(values)

        def cols(sampler, D):
            got = widths[sampler]
            return f"{got} features" if got == D else \
                f"{got} feature columns for n_components={D} (the map's own count; a " \
                "kernel_offset_ is one more)"

        ws = f"weight-space: {cols('weight_space', D_ws)}"
        if cfg.weight_space_features == "matched":
            ws += (f" (D + n_train{'' if D_ws == ctx.cfg.D + n else ' = ' + str(ctx.cfg.D + n)}"
                   f"{'' if D_ws == ctx.cfg.D + n else ', rounded up to a size the map takes'}: "
                   "the decoupled sampler's cost)")
        each = f"; mean over {R} draws of the map (spread: their sd)" if R > 1 else ""
        rows = []
        for sampler in SAMPLERS:
            what = ws if sampler == "weight_space" else \
                f"decoupled: {cols('decoupled', ctx.cfg.D)}"
            for metric in METRICS:
                v = np.array([per[sampler][metric] for per in values])
                rows.append(record("posterior", metric, float(v.mean()), method=sampler,
                                   spread=float(v.std(ddof=1)) if R > 1 else None,
                                   n_repeats=R if R > 1 else None,
                                   note=f"{what}; {note}{each}"))
        return rows
