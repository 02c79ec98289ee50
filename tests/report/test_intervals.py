"""rffbench/report/intervals.py: the intervals' coverage, measured where the truth is known
exactly (the mean squared Gram error of i.i.d. random Fourier maps, Sutherland & Schneider's
formula), and their contracts (too few seeds, equal values, non-positive values, bad
arguments, reproducibility)."""
import math

import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel
from rffbench.report import intervals as iv

#: cells per configuration: a coverage of 0.95 is measured to +-0.007 (one binomial sd)
CELLS = 1000
#: the bootstrap methods' cells (their failure at 3 and 5 seeds is 10-25 points below 95%:
#: 300 cells, +-0.025, show it at a third of the cost)
BOOT_CELLS = 300
SEEDS = (3, 5, 10)  # the presets' seed counts: landmarks 3, quadrature 5, dp-rfs 10
#: (map, D): the i.i.d. maps whose squared errors are drawn (skewed: chi-square-like sums)
CONFIGS = (("rff_pairs", 8), ("rff", 32), ("rff_pairs", 128))


def _kernel_and_points():
    X = np.random.default_rng(7).normal(size=(8, 3))
    return make_kernel("gaussian", lengthscale=1.5), X


def _errors(name, D, rng):
    """(CELLS x max(SEEDS)) mean squared errors over the 28 pairs of 8 points, each of an
    independent map drawn by the kernel's own spectral sampler ([cos, sin] pairs of D / 2
    frequencies, or cos(w.x + b) of D), and the exact expectation by the map's formula."""
    kern, X = _kernel_and_points()
    K = kern.gram(X)
    i, j = np.triu_indices(len(X), 1)
    S = max(SEEDS)
    nf = D // 2 if name == "rff_pairs" else D
    W = kern.sample_frequencies(CELLS * S * nf, X.shape[1], rng).reshape(CELLS, S, nf, -1)
    P = W @ X.T  # (cells, seeds, frequencies, points)
    if name == "rff_pairs":
        Khat = np.cos(P[..., i] - P[..., j]).mean(axis=2)
    else:
        b = rng.uniform(0, 2 * np.pi, (CELLS, S, nf, 1))
        C = np.cos(P + b)
        Khat = 2.0 * (C[..., i] * C[..., j]).mean(axis=2)
    mse = ((Khat - K[i, j]) ** 2).mean(axis=-1)
    exact = float(np.mean([FEATURE_MAPS[name].exact_mse(kern, X[a], X[c], D)
                           for a, c in zip(i, j)]))
    return mse, exact


@pytest.fixture(scope="module")
def draws():
    rng = np.random.default_rng(2007)
    return {cfg: _errors(*cfg, rng) for cfg in CONFIGS}


def _coverage(fn, cells, truth):
    hits = []
    for args in cells:
        _, lo, hi = fn(*args)
        hits.append(lo is not None and lo <= truth <= hi)
    return float(np.mean(hits))


def test_the_drawn_errors_have_the_formulas_mean(draws):
    """The premise: over all cells the mean squared error is the formula's, within 4
    standard errors (so a cell's truth is known)."""
    for (name, D), (mse, exact) in draws.items():
        se = mse.std(ddof=1) / math.sqrt(mse.size)
        assert abs(mse.mean() - exact) <= 4 * se, (name, D, mse.mean(), exact)


def test_coverage_of_the_mean(draws, capsys):
    """Per map, D, method and seed count, the share of the cells whose interval holds
    the exact expected error.  The lognormal (Cox) interval, the report's, is within
    93-97% everywhere; the percentile and BCa bootstraps are far below at 3 and 5 seeds
    (the reason they are not the report's), and the t interval undercovers these skewed
    errors (below 93% somewhere)."""
    table = {}
    for (name, D), (mse, exact) in draws.items():
        for S in SEEDS:
            for method in iv.METHODS:
                cells = mse if method in ("lognormal", "t") else mse[:BOOT_CELLS]
                table[name, D, S, method] = _coverage(
                    lambda v, m=method: iv.mean_interval(v, m), [(row[:S],) for row in cells],
                    exact)
    with capsys.disabled():
        print(f"\ncoverage of the mean's 95% interval ({CELLS} cells; the bootstraps "
              f"{BOOT_CELLS})")
        print("map D seeds " + " ".join(iv.METHODS))
        for (name, D) in CONFIGS:
            for S in SEEDS:
                print(name, D, S, " ".join(f"{table[name, D, S, m]:.3f}" for m in iv.METHODS))
    for method in iv.METHODS:  # the table the report quotes (intervals.COVERAGE) is this
        for S in SEEDS:
            got = [table[c, d, S, method] for c, d in CONFIGS]
            lo, hi = iv.COVERAGE[method][S]  # to a cell or so: another BLAS may round apart
            assert abs(min(got) - lo) <= 0.004 and abs(max(got) - hi) <= 0.004, (method, S,
                                                                                 got)
    for (name, D) in CONFIGS:
        for S in SEEDS:
            assert 0.93 <= table[name, D, S, "lognormal"] <= 0.97, (name, D, S)
            assert table[name, D, S, "percentile"] < 0.93 or S == 10
        assert table[name, D, 3, "bca"] < 0.8 and table[name, D, 3, "percentile"] < 0.8
    assert min(table[c, d, s, "t"] for c, d in CONFIGS for s in SEEDS) < 0.93


def test_coverage_of_a_ratio(draws, capsys):
    """The ratio of two maps' mean errors (rff_pairs at D = 8 over rff at D = 32, drawn
    apart), whose exact value is the formulas' ratio: the lognormal interval holds it in
    93-97% of the 1,000 cells at every seed count."""
    (a, ea), (b, eb) = draws["rff_pairs", 8], draws["rff", 32]
    truth = ea / eb
    cov = {}
    for S in SEEDS:
        for method in iv.METHODS:
            n = CELLS if method in ("lognormal", "t") else BOOT_CELLS
            cov[S, method] = _coverage(lambda x, y, m=method: iv.ratio_interval(x, y, m),
                                       [(x[:S], y[:S]) for x, y in zip(a[:n], b[:n])], truth)
    with capsys.disabled():
        print(f"\ncoverage of a ratio's 95% interval ({CELLS} cells; the bootstraps "
              f"{BOOT_CELLS})")
        for S in SEEDS:
            print(S, " ".join(f"{m} {cov[S, m]:.3f}" for m in iv.METHODS))
    for S in SEEDS:
        assert 0.93 <= cov[S, "lognormal"] <= 0.97, S


def test_coverage_words_quote_the_table_and_warn_outside_its_band(monkeypatch):
    """The captions' coverage and the report's warning: quoted from COVERAGE at the seed
    counts a report's points pool; a count under MIN_SEEDS says nothing (no interval is
    drawn there); a method outside the band, an unmeasured count or another level warns."""
    monkeypatch.setattr(iv, "COVERAGE", {**iv.COVERAGE, "lognormal": {3: (0.94, 0.96)},
                                         "t": {3: (0.90, 0.92)}})
    assert iv.coverage_words("lognormal", 0.95, [1, 3, 3]) == (
        "measured coverage 94.0%-96.0% at 3 seeds", None)
    text, warn = iv.coverage_words("t", 0.95, [3])
    assert text == "measured coverage 90.0%-92.0% at 3 seeds"
    assert warn == ("report.interval=t: its 95% intervals held the truth in 90.0%-92.0% of "
                    "cells at 3 seeds (too narrow); lognormal kept 93%-97% there")
    assert iv.coverage_words("lognormal", 0.95, [3, 30])[1] == (
        "report.interval=lognormal: its coverage is not measured at 30 seeds (measured at 3)")
    assert iv.coverage_words("lognormal", 0.9, [3]) == (
        "", "report.level=0.9: the intervals' coverage is measured at 95% only "
            "(docs/sweeps.md, Intervals)")
    assert iv.coverage_words("bca", 0.95, [2]) == ("", None)


def test_too_few_seeds_equal_values_and_non_positive_values():
    for method in iv.METHODS:
        assert iv.mean_interval([], method)[1:] == (None, None)
        m, lo, hi = iv.mean_interval([2.0], method)
        assert m == 2.0 and lo is None and hi is None
        assert iv.mean_interval([3.0, 3.0, 3.0], method) == (3.0, 3.0, 3.0)
        assert iv.mean_interval([1.0, float("nan"), 2.0, 4.0], method)[0] == pytest.approx(7 / 3)
        assert iv.ratio_interval([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], method)[1:] == (None, None)
    assert iv.mean_interval([1.0, 2.0], "percentile")[1] is None  # MIN_SEEDS: 3
    assert iv.mean_interval([1.0, 2.0], "t")[1] is not None
    assert iv.mean_interval([-1.0, 2.0, 3.0], "lognormal")[1:] == (None, None)
    assert iv.mean_interval([-1.0, 2.0, 3.0], "t")[1] < 0  # t is defined for any sign


@pytest.mark.parametrize("method", iv.METHODS)
def test_an_interval_holds_its_estimate_and_is_reproducible(method, rng):
    v, w = rng.gamma(2.0, size=7) + 0.1, rng.gamma(3.0, size=5) + 0.1
    m, lo, hi = iv.mean_interval(v, method)
    assert lo < m < hi and iv.mean_interval(v, method) == (m, lo, hi)
    r, rlo, rhi = iv.ratio_interval(v, w, method)
    assert r == pytest.approx(v.mean() / w.mean()) and rlo < r < rhi
    assert iv.ratio_interval(v, w, method) == (r, rlo, rhi)
    wide = iv.mean_interval(v, method, level=0.99)
    assert wide[1] <= lo and wide[2] >= hi


@pytest.mark.parametrize("kwargs,match", [({"method": "nope"}, "interval method 'nope'"),
                                          ({"level": 1.0}, r"level 1.0 is not in \[0.5, 1\)"),
                                          ({"resamples": 10}, "at least 100")])
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        iv.mean_interval([1.0, 2.0, 3.0], **kwargs)
    with pytest.raises(ValueError, match=match):
        iv.ratio_interval([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], **kwargs)
