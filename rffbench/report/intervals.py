"""Confidence intervals of the report's summaries over seeds: of a mean, and of a ratio of
two means (a speed-up, a tightness, one map's error over another's).

Five methods, each at a stated level (LEVEL, 95% by default):

* ``lognormal``: for positive values (errors, times), Cox's interval of a lognormal mean
  (Land 1972; Zhou & Gao 1997): log mean = ybar + s^2 / 2 (y = log value) with variance
  s^2 / n + s^4 / (2 (n - 1)) and a t quantile; for a ratio, the two log means' difference
  with Welch-Satterthwaite degrees of freedom.  Not defined where a value is <= 0 (the
  result says so: None);
* ``t``: Student's t interval of the mean; for a ratio, the delta method on its logarithm
  with Welch-Satterthwaite degrees of freedom (the two groups' own variances);
* ``percentile``: the bootstrap's percentiles (the seeds resampled with replacement,
  RESAMPLES times, from a fixed seed: a report is the same bit for bit); for a ratio,
  stratified: each group resampled apart;
* ``bca``: the bootstrap's bias-corrected and accelerated percentiles (Efron 1987: the bias
  from the share of resampled means below the estimate, the acceleration from the jackknife);
  stratified for a ratio, its acceleration from both groups' jackknifes;
* ``expanded``: the percentile interval at widened percentiles, Phi(-+ sqrt(n / (n - 1))
  t_{n-1}) (Hesterberg 2015), which undoes the bootstrap's narrowness at few seeds (a
  resampled mean's spread is sqrt((n - 1) / n) of the mean's, and a t quantile, not a normal
  one, describes an estimated spread).

Which one the report uses is decided by measured coverage, not by habit: the test-suite
draws maps whose expected error is known exactly (``tests/report/test_intervals.py``) and
counts how often each method's interval holds it, per number of seeds.  Fewer than
MIN_SEEDS values give no interval (None), and the report says so instead of drawing one.
"""
from __future__ import annotations

import math

import numpy as np

from ..config import INTERVALS

#: the interval methods (report.interval)
METHODS = INTERVALS
#: the default confidence level (report.level)
LEVEL = 0.95
#: the bootstrap's resamples (report.resamples) and its fixed seed
RESAMPLES = 2000
SEED = 20_071_121
#: the fewest values an interval is made from, per method (one value has no spread; two
#: give a bootstrap only 3 distinct means)
MIN_SEEDS = {"lognormal": 2, "t": 2, "percentile": 3, "bca": 3, "expanded": 3}
#: the measured coverage of each method's 95% interval of a mean, per number of seeds: the
#: (lowest, highest) share of cells holding the exact expected error over the three map / D
#: configurations of ``tests/report/test_intervals.py`` (1,000 cells each, the bootstraps'
#: 300), which measures it again and fails where it differs from this table
COVERAGE = {
    "lognormal": {3: (0.939, 0.953), 5: (0.938, 0.954), 10: (0.941, 0.957)},
    "t": {3: (0.910, 0.923), 5: (0.890, 0.915), 10: (0.905, 0.917)},
    "percentile": {3: (0.693, 0.710), 5: (0.770, 0.810), 10: (0.860, 0.883)},
    "bca": {3: (0.673, 0.687), 5: (0.797, 0.823), 10: (0.860, 0.897)},
    "expanded": {3: (0.693, 0.710), 5: (0.877, 0.887), 10: (0.900, 0.927)},
}
#: the measured coverage a 95% interval must keep to be called right
COVERAGE_BAND = (0.93, 0.97)


def _clean(values):
    v = np.asarray(values, dtype=np.float64).ravel()
    return v[~np.isnan(v)]


def _check(method, level, resamples):
    if method not in METHODS:
        raise ValueError(f"interval method {method!r} is not one of {', '.join(METHODS)}")
    if not 0.5 <= level < 1:
        raise ValueError(f"interval level {level!r} is not in [0.5, 1)")
    if int(resamples) < 100:
        raise ValueError(f"resamples={resamples!r}: at least 100")


def mean_interval(values, method="bca", level=LEVEL, resamples=RESAMPLES, seed=SEED):
    """(mean, low, high) of ``values`` (NaN dropped) at ``level`` by ``method``; (mean,
    None, None) when there are fewer than MIN_SEEDS[method] values, (nan, None, None) when
    there is none.  All equal values: the interval is that value."""
    _check(method, level, resamples)
    v = _clean(values)
    if v.size == 0:
        return math.nan, None, None
    m = float(v.mean())
    if v.size < MIN_SEEDS[method]:
        return m, None, None
    if np.ptp(v) == 0:
        return m, m, m
    if method == "lognormal":
        if v.min() <= 0:
            return m, None, None
        c, var, dof = _log_mean(v)
        half = _tq(level, dof) * math.sqrt(var)
        return m, math.exp(c - half), math.exp(c + half)
    if method == "t":
        half = _tq(level, v.size - 1) * float(v.std(ddof=1)) / math.sqrt(v.size)
        return m, m - half, m + half
    rng = np.random.default_rng(seed)
    boot = v[rng.integers(0, v.size, (int(resamples), v.size))].mean(axis=1)
    if method in ("percentile", "expanded"):
        lo, hi = np.quantile(boot, _percentiles(method, level, v.size))
        return m, float(lo), float(hi)
    jack = (v.sum() - v) / (v.size - 1)
    return (m, *_bca(boot, m, [jack], level))


def ratio_interval(num, den, method="bca", level=LEVEL, resamples=RESAMPLES, seed=SEED):
    """(mean(num) / mean(den), low, high): the ratio of two groups' means (independent
    seeds) at ``level`` by ``method``; (ratio, None, None) when either group has fewer than
    MIN_SEEDS[method] values or a mean is not positive (a ratio of means of positive
    quantities: errors, times)."""
    _check(method, level, resamples)
    a, b = _clean(num), _clean(den)
    if a.size == 0 or b.size == 0:
        return math.nan, None, None
    ma, mb = float(a.mean()), float(b.mean())
    r = ma / mb if mb else math.nan
    if min(a.size, b.size) < MIN_SEEDS[method] or not (ma > 0 and mb > 0):
        return r, None, None
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return r, r, r
    if method in ("t", "lognormal"):
        if method == "lognormal":
            if min(a.min(), b.min()) <= 0:
                return r, None, None
            (ca, va, fa), (cb, vb, fb) = _log_mean(a), _log_mean(b)
            center = math.exp(ca - cb)
        else:  # the delta method on log(ratio)
            va, vb = a.var(ddof=1) / a.size / ma**2, b.var(ddof=1) / b.size / mb**2
            fa, fb, center = a.size - 1, b.size - 1, r
        var = va + vb
        dof = var**2 / ((va**2 / fa if va else 0) + (vb**2 / fb if vb else 0))
        half = _tq(level, dof) * math.sqrt(var)
        return r, center * math.exp(-half), center * math.exp(half)
    rng = np.random.default_rng(seed)
    B = int(resamples)
    ba = a[rng.integers(0, a.size, (B, a.size))].mean(axis=1)
    bb = b[rng.integers(0, b.size, (B, b.size))].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        boot = ba / bb
    boot = boot[np.isfinite(boot)]
    if method in ("percentile", "expanded"):
        lo, hi = np.quantile(boot, _percentiles(method, level, min(a.size, b.size)))
        return r, float(lo), float(hi)
    ja = (a.sum() - a) / (a.size - 1) / mb if a.size > 1 else np.array([r])
    jb = ma / ((b.sum() - b) / (b.size - 1)) if b.size > 1 else np.array([r])
    return (r, *_bca(boot, r, [ja, jb], level))


def _tq(level, dof):
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, dof))


def _log_mean(v):
    """Cox's estimate of log E[v] for lognormal v, its variance and its degrees of freedom
    (n - 1, as the t interval's)."""
    y = np.log(v)
    n, s2 = y.size, float(y.var(ddof=1))
    return float(y.mean()) + s2 / 2, s2 / n + s2 * s2 / (2 * (n - 1)), n - 1


def _percentiles(method, level, n):
    """The bootstrap's quantiles of a percentile interval: (1 -+ level) / 2, or expanded
    (Hesterberg 2015) for the bootstrap's narrowness at n values: Phi(-+ sqrt(n / (n - 1))
    t_{n-1}) with t_{n-1} the t quantile at ``level``."""
    if method == "percentile":
        return [(1 - level) / 2, (1 + level) / 2]
    from scipy.stats import norm, t

    z = math.sqrt(n / (n - 1)) * float(t.ppf(0.5 + level / 2, n - 1))
    return [float(norm.cdf(-z)), float(norm.cdf(z))]


def _bca(boot, estimate, jackknifes, level):
    """The BCa interval of bootstrap replicates ``boot`` of ``estimate``; the acceleration
    from the jackknife replicates of each stratum (summed over the strata)."""
    from scipy.stats import norm

    below = (np.count_nonzero(boot < estimate) + 0.5 * np.count_nonzero(boot == estimate)) \
        / boot.size
    z0 = float(norm.ppf(min(max(below, 1.0 / boot.size), 1 - 1.0 / boot.size)))
    num = den = 0.0
    for jack in jackknifes:
        d = jack.mean() - jack
        num += float((d**3).sum())
        den += float((d**2).sum())
    a = num / (6.0 * den**1.5) if den > 0 else 0.0
    qs = []
    for z in norm.ppf([(1 - level) / 2, (1 + level) / 2]):
        qs.append(float(norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))))
    lo, hi = np.quantile(boot, qs)
    return float(lo), float(hi)


def coverage_words(method, level, seeds):
    """(text, warning) on ``method``'s measured coverage (COVERAGE) at these numbers of
    ``seeds``: the text states it for a caption; the warning (None when there is none) says
    where it is outside COVERAGE_BAND, or not measured (another level, another count)."""
    counts = sorted({int(n) for n in seeds if n >= MIN_SEEDS[method]})
    if not counts:
        return "", None
    if abs(level - 0.95) > 1e-9:
        return "", (f"report.level={level:g}: the intervals' coverage is measured at 95% "
                    "only (docs/sweeps.md, Intervals)")
    table = COVERAGE[method]
    have = [n for n in counts if n in table]
    missing = [n for n in counts if n not in table]
    parts = [f"{table[n][0]:.1%}-{table[n][1]:.1%} at {n} seeds" for n in have]
    text = ("measured coverage " + ", ".join(parts)) if parts else ""
    def kept(m, n):
        return n in COVERAGE[m] and (COVERAGE_BAND[0] <= COVERAGE[m][n][0]
                                     and COVERAGE[m][n][1] <= COVERAGE_BAND[1])

    off = [n for n in have if not kept(method, n)]
    warn = []
    if off:
        best = [m for m in METHODS if all(kept(m, n) for n in off)]
        warn.append(f"report.interval={method}: its 95% intervals held the truth in "
                    + ", ".join(f"{table[n][0]:.1%}-{table[n][1]:.1%} of cells at {n} seeds ("
                                + ("too narrow" if table[n][0] < COVERAGE_BAND[0] else
                                   "too wide") + ")" for n in off)
                    + (f"; {', '.join(best)} kept {COVERAGE_BAND[0]:.0%}-"
                       f"{COVERAGE_BAND[1]:.0%} there" if best else ""))
    if missing:
        warn.append(f"report.interval={method}: its coverage is not measured at "
                    + ", ".join(str(n) for n in missing) + " seeds (measured at "
                    + ", ".join(str(n) for n in table) + ")")
    return text, ("; ".join(warn) or None)

