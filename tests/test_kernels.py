"""rffbench.kernels: every kernel's exact Gram against an independent reference (scipy's cdist,
scikit-learn, closed forms), spectral samplers, lengthscale rules and the kernel block."""
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics.pairwise import polynomial_kernel

from rffbench import _numba as nbk
from rffbench.config import validate
from rffbench.errors import ConfigError
from rffbench.exact import kernel_times
from rffbench.kernels import (
    DIRECT_SQDIST_MAX_D,
    KERNELS,
    ArcCosine0,
    ArcCosine1,
    Polynomial,
    make_kernel,
)
from tests.helpers import case_id, compose_config, run_cli, shift_invariant_kernel_cases
from tests.references import REFERENCES, anova_reference, arccos_reference, reference_gram

#: the peer libraries' kernels (their references: tests/references.py)
FAMILY_KERNELS = ("linear", "exp_dot", "intersection", "anova")
PARAMS = {"anova": [{"degree": 1}, {"degree": 2}, {"degree": 4}]}
FAMILY_CASES = [(n, p) for n in FAMILY_KERNELS for p in PARAMS.get(n, [{}])]

LS = 1.7


CASES = list(shift_invariant_kernel_cases())
IDS = [case_id(n, p) for n, p in CASES]


@pytest.mark.parametrize("name,params", FAMILY_CASES,
                         ids=[n + "".join(f"-{v}" for v in p.values()) for n, p in FAMILY_CASES])
def test_gram_and_products_match_the_reference(name, params, dtype, rng):
    X = np.abs(rng.normal(size=(37, 7))).astype(dtype)
    Y = np.abs(rng.normal(size=(23, 7))).astype(dtype)
    k = make_kernel(name, lengthscale=1.9, **params)
    ref = reference_gram(name, X, Y, 1.9, **params)
    G = k.gram(X, Y)
    assert G.dtype == dtype
    tol = (1e-13 if dtype == np.float64 else 3e-6) * np.abs(ref).max()
    assert np.max(np.abs(G - ref)) <= tol
    # the kernel-times-matrix products of the exact baseline (tiles, or Python tiles
    # through _gram_into for anova)
    V = rng.normal(size=(23, 3))
    P = kernel_times(k, X.astype(np.float64), Y.astype(np.float64), V)
    np.testing.assert_allclose(P, ref @ V, rtol=1e-11, atol=1e-11 * np.abs(ref).max())


def test_exp_dot_series_and_overflow_refusal():
    k = make_kernel("exp_dot", lengthscale=1.3)
    a = k.maclaurin_coefficients(2.0)
    lam = 4.0 / 1.3**2
    np.testing.assert_allclose(a[:4], [lam**0 / 1, 1 / 1.3**2, 1 / 1.3**4 / 2, 1 / 1.3**6 / 6])
    # the cut series at |x.y| <= R^2 is exp to float64 resolution
    assert abs(np.sum(a * 4.0 ** np.arange(a.size)) - math.exp(lam)) <= 1e-15 * math.exp(lam)
    from rffbench.errors import DataError

    with pytest.raises(DataError, match="kernel.lengthscale >= "):
        make_kernel("exp_dot", lengthscale=0.1).check_values(5.0)


def test_anova_recursions_are_the_subset_sums(rng):
    X, Y = rng.normal(size=(6, 7)), rng.normal(size=(5, 7))
    for p in (1, 2, 3, 7):
        G = np.empty((6, 5))
        nbk.anova_gram(X, np.ascontiguousarray(Y.T), p, 0.5, G)
        np.testing.assert_allclose(G, 0.5 * anova_reference(X, Y, p), rtol=1e-12, atol=1e-12)
        R = rng.choice([-1.0, 1.0], size=(4, 7))
        Z = np.empty((6, 4))
        nbk.elementary_symmetric(X, R, p, 0.3, Z)
        ref = 0.3 * np.array([[anova_reference((x * r)[None], np.ones((1, 7)), p)[0, 0]
                                for r in R] for x in X])
        np.testing.assert_allclose(Z, ref, rtol=1e-12, atol=1e-12)


def test_every_shift_invariant_kernel_has_a_reference():
    """A built-in shift-invariant kernel without a reference fails here, by name."""
    names = {n for n, _ in shift_invariant_kernel_cases()}
    assert names <= set(REFERENCES), sorted(names - set(REFERENCES))
    with pytest.raises(KeyError, match="no reference Gram for kernel 'nope'"):
        reference_gram("nope", np.zeros((1, 1)), np.zeros((1, 1)), 1.0)


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
@pytest.mark.parametrize("d", [3, DIRECT_SQDIST_MAX_D + 9], ids=["direct", "gemm"])
def test_gram_matches_reference(name, params, d, dtype, rng):
    X = rng.normal(size=(67, d)).astype(dtype)
    Y = rng.normal(size=(45, d)).astype(dtype)
    ls = LS * math.sqrt(d)
    k = make_kernel(name, lengthscale=ls, **params)
    G = k.gram(X, Y)
    ref = reference_gram(name, X, Y, ls, **params)
    assert G.dtype == dtype and G.shape == (67, 45)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    assert np.max(np.abs(G - ref)) <= tol
    # symmetric case and unit diagonal
    K = k.gram(X)
    assert np.max(np.abs(K - K.T)) <= tol and np.max(np.abs(np.diag(K) - 1)) <= tol
    # k_of_delta agrees with the Gram matrix
    kd = k.k_of_delta(X[:5, None, :].astype(np.float64) - Y[None, :7, :].astype(np.float64))
    assert np.max(np.abs(kd - ref[:5, :7])) <= 1e-12


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_spectral_sampler_second_moment_and_sigma_p2(name, params):
    """E|w|^2 of the sampler equals sigma_p^2 (finite cases), and E cos(w.delta) = k(delta)."""
    d, n = 3, 400_000
    k = make_kernel(name, lengthscale=LS, **params)
    W = k.sample_frequencies(n, d, np.random.default_rng(7))
    delta = np.array([0.4, -0.9, 1.3])
    c = np.cos(W @ delta)
    # mean of bounded cos terms: sd <= 1/sqrt(n); 5 sigma
    assert abs(c.mean() - k.k_of_delta(delta)) <= 5 * c.std() / math.sqrt(n)
    s2 = k.sigma_p2(d)
    if math.isfinite(s2):
        sq = (W**2).sum(1)
        if name == "matern":  # t-distributed norms: heavy tail, finite variance only for nu > 2
            assert abs(sq.mean() - s2) <= 0.05 * s2
        else:
            assert abs(sq.mean() - s2) <= 5 * sq.std() / math.sqrt(n)
    else:
        assert name == "laplacian" or (name == "matern" and params["nu"] <= 1)


def test_median_lengthscale_uses_kernel_metric(rng):
    X = rng.normal(size=(300, 4))
    from scipy.spatial.distance import pdist

    g = make_kernel("gaussian", lengthscale="median").fit(X)
    lap = make_kernel("laplacian", lengthscale="median").fit(X)
    assert g.lengthscale_ == pytest.approx(np.median(pdist(X)))
    assert lap.lengthscale_ == pytest.approx(np.median(pdist(X, "cityblock")))
    sub = make_kernel("gaussian", lengthscale="median", median_subsample=50).fit(X)
    assert sub.lengthscale_ != g.lengthscale_ and sub.lengthscale_ > 0



def test_a_data_rule_is_computed_once_per_process_for_the_same_points(rng, monkeypatch):
    """The median (and knn) rule's value is kept per process for the same points: the same
    rows again (another array) give the first value without a new pdist; one changed
    bit, another metric or another rule computes anew; the memo keeps the most recent."""
    from rffbench.kernels import base

    calls = []
    real = base.pdist
    monkeypatch.setattr(base, "pdist", lambda W, metric: calls.append(metric) or real(W, metric))
    monkeypatch.setattr(base, "_DATA_RULE_MEMO", type(base._DATA_RULE_MEMO)())
    X = rng.normal(size=(200, 3))
    first = make_kernel("gaussian", lengthscale="median").fit(X).lengthscale_
    again = make_kernel("gaussian", lengthscale="median").fit(X.copy(order="F")).lengthscale_
    assert again == first == float(np.median(real(X, "euclidean"))) and len(calls) == 1
    Y = X.copy()
    Y[7, 1] = np.nextafter(Y[7, 1], np.inf)
    make_kernel("gaussian", lengthscale="median").fit(Y)
    make_kernel("laplacian", lengthscale="median").fit(X)
    knn = make_kernel("gaussian", lengthscale="knn5").fit(X).lengthscale_
    assert calls == ["euclidean", "euclidean", "cityblock", "euclidean"] and knn != first
    monkeypatch.setattr(base, "DATA_RULE_MEMO", 2)
    for i in range(3):
        make_kernel("gaussian", lengthscale="median").fit(X + 1 + i)
    assert len(base._DATA_RULE_MEMO) == 2 and len(calls) == 7

@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "mean", True])
def test_bad_lengthscale(bad):
    with pytest.raises(ConfigError, match="kernel.lengthscale"):
        make_kernel("gaussian", lengthscale=bad).fit(np.zeros((3, 2)) + np.arange(3)[:, None])


def test_bad_nu_and_unknown_kernel():
    with pytest.raises(ConfigError, match="kernel.nu=2.0"):
        make_kernel("matern", nu=2.0).fit(None)
    with pytest.raises(ConfigError, match="kernel='rbf' is not allowed: use one of gaussian"):
        make_kernel("rbf")


def test_knn_lengthscale_is_the_mean_distance_to_the_kth_neighbour(rng):
    """kernel.lengthscale=knn<k> (Yu et al. 2016's bandwidth rule, k = 50): the mean over the
    (subsampled) points of the distance to their k-th nearest neighbour among them."""
    from scipy.spatial.distance import cdist

    from rffbench.errors import DataError
    from rffbench.kernels import make_kernel

    X = rng.normal(size=(300, 5))
    ref = np.mean(np.sort(cdist(X, X), axis=1)[:, 50])  # column 0 is the point itself
    assert make_kernel("gaussian", lengthscale="knn50").fit(X).ls == pytest.approx(ref, rel=1e-12)
    k = make_kernel("gaussian", lengthscale="knn5", median_subsample=100).fit(X)
    sub = X[np.sort(np.random.default_rng(0).choice(300, 100, replace=False))]
    assert k.ls == pytest.approx(np.mean(np.sort(cdist(sub, sub), axis=1)[:, 5]), rel=1e-12)
    with pytest.raises(DataError, match=r"kernel.lengthscale='knn50' needs at least 51 points"):
        make_kernel("gaussian", lengthscale="knn50").fit(X[:30])


def test_unknown_kernel_parameters_are_an_error_never_dropped():
    from rffbench.errors import ConfigError
    from rffbench.kernels import make_kernel

    assert make_kernel("matern", lengthscale=1.0, nu=2.5).nu == 2.5
    with pytest.raises(ConfigError, match="nu is not a parameter of .*it takes"):
        make_kernel("gaussian", lengthscale=1.0, nu=2.5)
    with pytest.raises(ConfigError, match="kernel.params.nu=2.5 is not allowed: kernel=matern "
                                          r"takes no further parameters \(set nu as kernel.nu\)"):
        validate(compose_config(["kernel=matern", "+kernel.params.nu=2.5"]))


def test_a_kernel_without_a_yaml_file_runs_from_its_declarations(tmp_path):
    """rational_quadratic has no conf/kernel file: kernel=rational_quadratic and its own key
    kernel.alpha come from the class; the records carry every kernel parameter
    (kernel_params), and alpha changes the exact Gram and so the error."""

    fro = {}
    for alpha in (0.5, 20.0):
        out = tmp_path / f"a{alpha}"
        r = run_cli("kernel=rational_quadratic", f"kernel.alpha={alpha}", "dataset=wine", "D=64",
                    "kernel.lengthscale=2.0", "measure.bounds.enabled=false",
                    "measure.timing.enabled=false", "measure.learning.enabled=false",
                    f"hydra.run.dir={out}")
        assert r.returncode == 0, r.stderr[-2000:]
        df = pd.read_csv(out / "records.csv")
        assert set(df.kernel) == {"rational_quadratic"}
        assert set(df.kernel_params) == {f"alpha={alpha:g}"}
        fro[alpha] = df[df.metric == "rel_fro_error"].value.iloc[0]
    assert fro[0.5] != fro[20.0]
    bad = run_cli("kernel=rational_quadratic", "kernel.alpha=-1", "dataset=wine")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "kernel.alpha=-1.0 is not allowed: use a number > 0" in bad.stderr
    inert = run_cli("kernel=gaussian", "kernel.alpha=3", "dataset=wine")
    assert inert.returncode == 2 and ("kernel=gaussian does not use kernel.alpha; "
                                      "kernel=rational_quadratic does") in inert.stderr


@pytest.mark.parametrize("order,cls", [(0, ArcCosine0), (1, ArcCosine1)])
def test_arccos_gram_closed_form_and_special_values(order, cls, rng, dtype):
    X, Y = rng.normal(size=(40, 5)), rng.normal(size=(30, 5))
    k = cls(lengthscale=2.3).fit(None)
    G = k.gram(X.astype(dtype), Y.astype(dtype))
    assert G.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(G, arccos_reference(X, Y, order, 2.3), rtol=tol, atol=tol)
    e1, e2 = np.eye(5)[:1] * 3.0, np.eye(5)[1:2] * 2.0  # orthogonal: theta = pi/2
    want = 0.5 if order == 0 else (3.0 / 2.3) * (2.0 / 2.3) / np.pi
    assert k.gram(e1, e2)[0, 0] == pytest.approx(want, rel=1e-14)
    assert k.gram(e1, e1)[0, 0] == pytest.approx(1.0 if order == 0 else (3.0 / 2.3) ** 2)
    assert k.gram(np.zeros((1, 5)), e1)[0, 0] == 0.0  # step(0) = 0: the zero vector


@pytest.mark.parametrize("scale", [1e-162, 1e-300, 1e-310, 1e200])
def test_arccos0_of_rows_too_small_or_large_to_square_is_their_angles(scale, rng):
    """The order-0 arc-cosine kernel depends on the angle only: rows scaled so far that
    their squares underflow (to a subnormal, or to 0) or overflow keep the unscaled
    values in the Gram matrix and in K v, and only an exact zero row gives 0 (its
    subnormal square's root once made a row of 1.7e-162 give 0.7125 with itself,
    and the reference 0)."""
    X = rng.normal(size=(7, 3))
    X[3] = 0.0
    k = ArcCosine0(lengthscale=1.3).fit(None)
    want = arccos_reference(X, X, 0, 1.3)
    # acos near 1 turns a rounding of 1e-16 in cos into 1.5e-8 in the angle: the diagonal
    # and every comparison below are to 1e-7, far below what underflow did (0.29 off)
    assert want[3].max() == 0.0 and np.diag(want)[np.arange(7) != 3].min() > 1 - 1e-7
    np.testing.assert_allclose(arccos_reference(X * scale, X, 0, 1.3), want, atol=1e-7)
    np.testing.assert_allclose(k.gram(X * scale, X), want, atol=1e-7)
    v = rng.normal(size=(7, 2))
    np.testing.assert_allclose(kernel_times(k, X * scale, X, v), want @ v, atol=1e-6)


def test_polynomial_gram_matches_scikit_learn(rng, dtype):
    X, Y = rng.normal(size=(40, 6)), rng.normal(size=(25, 6))
    k = Polynomial(lengthscale=1.7, degree=3, coef0=0.5).fit(None)
    G = k.gram(X.astype(dtype), Y.astype(dtype))
    ref = polynomial_kernel(X, Y, degree=3, gamma=1 / 1.7**2, coef0=0.5)
    # float32: the GEMM rounds x.y (~1e-7 |x||y|), the cube amplifies it
    np.testing.assert_allclose(G, ref, rtol=1e-12 if dtype == np.float64 else 1e-4,
                               atol=0 if dtype == np.float64 else 1e-4 * np.abs(ref).max())
    assert Polynomial(gamma=0.25).fit(None).ls == pytest.approx(2.0)
    np.testing.assert_allclose(k.maclaurin_coefficients(), [0.125, 3 * 0.25 / 1.7**2,
                                                  3 * 0.5 / 1.7**4, 1 / 1.7**6])


# ---- chi-squared kernels (non-negative data) ---------------------------------------
def test_chi2_grams_against_scikit_learn_and_closed_forms(rng, dtype):
    from sklearn.metrics.pairwise import additive_chi2_kernel

    from rffbench.kernels import AdditiveChi2, SkewedChi2

    X, Y = rng.random((30, 6)), rng.random((20, 6))
    X[0, :2] = 0.0
    Y[0, :2] = 0.0  # 0/0 terms count as 0
    tol = 1e-12 if dtype == np.float64 else 2e-6
    # sum 2xy/(x+y) = sum (x+y)/2 + scikit-learn's -sum (x-y)^2/(x+y) / 2
    ref = 0.5 * (X.sum(1)[:, None] + Y.sum(1)[None]) + 0.5 * additive_chi2_kernel(X, Y)
    got = AdditiveChi2(lengthscale=2.0).fit(None).gram(X.astype(dtype), Y.astype(dtype))
    np.testing.assert_allclose(got, ref / 2.0, rtol=tol, atol=tol)
    c = 0.7
    ref = np.prod(2 * np.sqrt((X[:, None] + c) * (Y[None] + c)) / (X[:, None] + Y[None] + 2 * c),
                  axis=2)
    k = SkewedChi2(lengthscale=1.0, skewedness=c).fit(None)
    np.testing.assert_allclose(k.gram(X.astype(dtype), Y.astype(dtype)), ref, rtol=tol, atol=tol)
    k3 = SkewedChi2(lengthscale=3.0, skewedness=c).fit(None)  # sech((u - v) / (2 l))
    U, V = np.log(X + c), np.log(Y + c)
    np.testing.assert_allclose(k3.gram(X, Y),
                               np.prod(1 / np.cosh((U[:, None] - V[None]) / 6.0), axis=2),
                               rtol=1e-12)
    assert k3.sigma_p2(6) == pytest.approx(6 / 36.0)


def test_skewed_chi2_frequencies_have_the_sech_law():
    """Hyperbolic-secant frequencies of scale 1/(pi l): variance 1/(4 l^2) (5 SE)."""
    from rffbench.kernels import SkewedChi2

    W = SkewedChi2(lengthscale=1.5).fit(None).sample_frequencies(200000, 1,
                                                                np.random.default_rng(0))
    v = W.var()
    se = np.sqrt((np.mean((W - W.mean()) ** 4) - v**2) / W.size)
    assert abs(v - 1 / (4 * 1.5**2)) <= 5 * se


def test_sech_frequencies_follow_the_hyperbolic_secant_law():
    """The sech kernel's spectral density is (l / 2) sech(pi l w / 2) per coordinate: its
    inverse CDF maps u back through the CDF F(w) = (2 / pi) arctan(exp(pi l w / 2)), the
    sampler's coordinates pass a Kolmogorov-Smirnov test against F, and their variance is
    1 / l^2 (sigma_p^2 = d / l^2; the generic sampler test checks E cos(w.delta) = k)."""
    from scipy.stats import kstest

    k = make_kernel("sech", lengthscale=LS).fit(None)
    U = np.linspace(1e-6, 1 - 1e-6, 1001)[:, None]
    W = k.frequencies_from_uniform(U, 1)[:, 0]
    np.testing.assert_allclose(2 / np.pi * np.arctan(np.exp(np.pi * LS * W / 2)), U[:, 0],
                               rtol=1e-12, atol=1e-15)
    w = k.sample_frequencies(20000, 3, np.random.default_rng(5)).ravel()
    cdf = lambda x: 2 / np.pi * np.arctan(np.exp(np.pi * LS * x / 2))  # noqa: E731
    assert kstest(w, cdf).pvalue > 1e-3
    assert k.sigma_p2(3) == pytest.approx(3 / LS**2)
    assert k.k_of_delta(np.array([0.0, 0.0])) == 1.0
    assert k.k_of_delta(np.array([800.0 * LS])) == 0.0  # no overflow far away


def test_the_sech_kernel_runs_through_the_command(tmp_path):
    """kernel=sech with maps for every shift-invariant kernel, as a user types it: a small
    approximation error, and (rff_pairs) a finite sigma_p^2 that gives Rahimi & Recht's
    bound a value."""
    from tests.helpers import run_cli

    for features in ("rff_pairs", "qmc"):
        out = tmp_path / features
        p = run_cli("kernel=sech", f"features={features}", "dataset=synthetic",
                    "dataset.n=400", "dataset.d=3", "D=64", f"hydra.run.dir={out}")
        assert p.returncode == 0, p.stderr
        rec = pd.read_csv(out / "records.csv")
        assert set(rec.kernel) == {"sech"}
        err = rec[(rec.measurement == "approximation") & (rec.metric == "rel_fro_error")]
        assert len(err) and np.isfinite(err.value).all() and (err.value < 0.5).all()
        if features == "rff_pairs":
            rr = rec[(rec.method == "rahimi_recht") & (rec.metric == "eps_bound")]
            assert len(rr) and np.isfinite(rr.value).all() and (rr.value > 0).all()


def test_the_packages_kernel_table_has_every_shift_invariant_kernel():
    """The table of rffbench.kernels' docstring (k(delta), frequencies, sigma_p^2) has a row
    for every built-in shift-invariant kernel and no other: a kernel added fails here until
    the table has its row."""
    import rffbench.kernels as kernels_module

    doc = kernels_module.__doc__
    table = doc[doc.index("==="):doc.index("(sigma_p^2 = E|w|^2.)")].splitlines()[3:]
    names = {line.split()[0] for line in table if line[:1] not in ("", " ", "=")}
    assert names == {n for n in KERNELS.builtins() if KERNELS[n].shift_invariant}


@pytest.mark.parametrize("name", sorted(KERNELS.builtins()))
@pytest.mark.parametrize("d", [3, DIRECT_SQDIST_MAX_D + 9], ids=["direct", "gemm"])
def test_kernel_rows_against_fixed_rows_are_gram_into_bit_for_bit(name, d, dtype, rng):
    """Kernel.against(Y) (Y's own numbers made once, for the pivoted Cholesky rules'
    rounds) gives _gram_into's values exactly, block after block of rows."""
    k = make_kernel(name, lengthscale=LS * math.sqrt(d))
    Y = k.inputs(np.abs(rng.normal(size=(41, d))).astype(dtype))
    rows = k.against(Y)
    for idx in ([0], [5, 2, 40], list(range(0, 41, 3))):
        X = np.ascontiguousarray(Y[idx])
        want, got = np.empty((len(idx), 41), dtype), np.full((len(idx), 41), np.nan, dtype)
        k._gram_into(X, Y, want)
        rows(X, got)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,params", [("gaussian", {}), ("matern", {"nu": 2.5})])
def test_a_symmetric_gram_by_tiles_at_small_d_takes_the_exact_distances(name, params, dtype,
                                                                        rng):
    """gram(X) of SYMMETRIC_TILES_MIN_N rows or more goes through the tiles; up to
    DIRECT_SQDIST_MAX_D coordinates a squared-distance kernel's tiles take the exact
    coordinate loop, as its blocks do (the differential test compares every kernel's tiles
    above it): the reference to rounding, exactly symmetric, the blocks' values to an ulp
    (float64 and float32)."""
    from rffbench.kernels.base import SYMMETRIC_TILES_MIN_N

    n, d = SYMMETRIC_TILES_MIN_N + 3, 3
    X = rng.normal(size=(n, d)).astype(dtype)
    k = make_kernel(name, lengthscale=LS * math.sqrt(d), **params)
    K = k.gram(X)
    ref = reference_gram(name, X, X, LS * math.sqrt(d), **params)
    assert K.dtype == dtype and np.array_equal(K, K.T)
    assert np.max(np.abs(K - ref)) <= (1e-12 if dtype == np.float64 else 2e-6)
    blocks = np.empty_like(K)
    k._gram_into(k.inputs(X), k.inputs(X), blocks)
    assert np.max(np.abs(K - blocks)) <= (1e-15 if dtype == np.float64 else 1e-7)


@pytest.mark.parametrize("name", ["gaussian", "laplacian", "rational_quadratic", "arccos1",
                                  "intersection"])
@pytest.mark.parametrize("n", [40, 2049])
def test_gram_into_a_kept_output_is_the_fresh_gram(name, n, rng):
    """gram(X, out=buf) over a buffer full of NaN (the speed measurement's kept output):
    every element written, bit for bit the fresh Gram, by each route (blocks; from 2,048
    rows the symmetric tiles, or the whole Gram mirrored) and for K(X, Y)."""
    X = np.abs(rng.normal(size=(n, 5)))
    k = make_kernel(name, lengthscale=LS).fit(X)
    buf = np.full((n, n), np.nan)
    assert k.gram(X, out=buf) is buf
    np.testing.assert_array_equal(buf, k.gram(X))
    Y = X[:7]
    buf = np.full((n, 7), np.nan)
    np.testing.assert_array_equal(k.gram(X, Y, out=buf), k.gram(X, Y))


@pytest.mark.parametrize("out,got", [
    (np.empty((5, 4)), "ndarray (5, 4) float64"),
    (np.empty((5, 5), dtype=np.float32), "ndarray (5, 5) float32"),
    (np.empty((5, 5), order="F"), "ndarray (5, 5) float64"),  # Fortran order
    ([[0.0] * 5] * 5, "list"),
])
def test_gram_refuses_an_output_it_cannot_write_in_one_line(out, got):
    X = np.ones((5, 3))
    with pytest.raises(ValueError) as err:
        make_kernel("gaussian", lengthscale=LS).gram(X, out=out)
    assert str(err.value) == ("out: a writeable C-contiguous float64 array of shape (5, 5) is "
                              f"allowed, got {got}")
    ro = np.empty((5, 5))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out: a writeable C-contiguous"):
        make_kernel("gaussian", lengthscale=LS).gram(X, out=ro)
