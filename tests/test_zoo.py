"""Kernels that are not shift-invariant and their maps: exact Grams against scikit-learn
or closed forms, fast transforms against explicit computations, positive random
features' variance, peers in distribution, and the refusals that name what works."""
import math

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel

from conftest import compose_config
from rffbench import _numba as nbk
from rffbench.config import validate
from rffbench.errors import ConfigError
from rffbench.experiment import run
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import ArcCosine0, ArcCosine1, Gaussian, Polynomial
from rffbench.theory import VARIANCE_TERMS, positive_variance


def arccos_reference(X, Y, order, l):
    """Cho & Saul's closed form, in numpy: k_n = |x|^n |y|^n J_n(theta) / pi of x / l, y / l."""
    X, Y = X / l, Y / l
    nx, ny = np.linalg.norm(X, axis=1), np.linalg.norm(Y, axis=1)
    c = np.clip(X @ Y.T / np.outer(nx, ny), -1, 1)
    t = np.arccos(c)
    if order == 0:
        return 1 - t / np.pi
    return np.outer(nx, ny) * (np.sin(t) + (np.pi - t) * c) / np.pi


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


def test_polynomial_gram_matches_scikit_learn(rng, dtype):
    X, Y = rng.normal(size=(40, 6)), rng.normal(size=(25, 6))
    k = Polynomial(lengthscale=1.7, degree=3, coef0=0.5).fit(None)
    G = k.gram(X.astype(dtype), Y.astype(dtype))
    ref = polynomial_kernel(X, Y, degree=3, gamma=1 / 1.7**2, coef0=0.5)
    # float32: the GEMM rounds x.y (~1e-7 |x||y|), the cube amplifies it
    np.testing.assert_allclose(G, ref, rtol=1e-12 if dtype == np.float64 else 1e-4,
                               atol=0 if dtype == np.float64 else 1e-4 * np.abs(ref).max())
    assert Polynomial(gamma=0.25).fit(None).ls == pytest.approx(2.0)
    np.testing.assert_allclose(k.coefficients(), [0.125, 3 * 0.25 / 1.7**2,
                                                  3 * 0.5 / 1.7**4, 1 / 1.7**6])


# ---- numba passes against numpy ---------------------------------------------------
def test_numba_passes_match_numpy(rng):
    Z = rng.normal(size=(50, 33))
    for order, ref in ((0, (Z > 0) * 0.3), (1, np.maximum(Z, 0) * 0.3)):
        A = Z.copy()
        nbk.arccos_features_inplace(A, order, 0.3)
        np.testing.assert_array_equal(A, ref)
    shift = rng.random(50)
    A = Z.copy()
    nbk.positive_features_inplace(A, shift, 0.2)
    np.testing.assert_allclose(A, 0.2 * np.exp(Z - shift[:, None]), rtol=1e-15)
    P = rng.normal(size=(7, 12))
    count = np.array([0, 3, 1, 2, 0])
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    w = rng.random(5)
    out = np.empty((7, 5))
    nbk.group_products(P, start, count, w, out)
    ref = np.column_stack([w[f] * np.prod(P[:, start[f]:start[f] + count[f]], axis=1)
                           for f in range(5)])
    np.testing.assert_allclose(out, ref, rtol=1e-14)
    X = rng.normal(size=(6, 4))
    h, s = rng.integers(0, 8, size=(2, 4)), rng.choice([-1.0, 1.0], size=(2, 4))
    C = np.empty((2, 6, 8))
    nbk.count_sketches(X, h, s, C)
    for t in range(2):
        M = np.zeros((4, 8))
        M[np.arange(4), h[t]] = s[t]
        np.testing.assert_allclose(C[t], X @ M, atol=1e-14)


# ---- fast transforms against explicit computations ----------------------------------
def test_tensorsketch_is_the_count_sketch_of_the_tensor_square(rng):
    """Degree 2: TS(x) = count sketch of x' (x) x' with hash (h1(i) + h2(j)) mod D and sign
    s1(i) s2(j), computed explicitly."""
    X = rng.normal(size=(5, 3))
    k = Polynomial(lengthscale=1.3, degree=2, coef0=0.7)
    f = FEATURE_MAPS["tensorsketch"](kernel=k, n_components=16, random_state=0).fit(X)
    Xp = np.hstack([X / 1.3, np.full((5, 1), math.sqrt(0.7))])
    h, s = f.hashes_, f.signs_
    ref = np.zeros((5, 16))
    for i in range(4):
        for j in range(4):
            np.add.at(ref, (slice(None), (h[0, i] + h[1, j]) % 16),
                      s[0, i] * s[1, j] * Xp[:, i] * Xp[:, j])
    np.testing.assert_allclose(f.transform(X), ref, atol=1e-12)


def test_maclaurin_is_a_weighted_product_of_rademacher_projections(rng):
    X = rng.normal(size=(6, 4))
    f = FEATURE_MAPS["maclaurin"](kernel=Polynomial(lengthscale=1.0, degree=3),
                                  n_components=20, random_state=1).fit(X)
    P = X @ f.projections_
    ref = np.column_stack([f.weights_[j] * np.prod(P[:, f.start_[j]:f.start_[j]
                                                     + f.degrees_[j]], axis=1)
                           for j in range(20)])
    np.testing.assert_allclose(f.transform(X), ref, rtol=1e-13, atol=1e-14)
    assert set(np.unique(f.projections_)) <= {-1.0, 1.0}


# ---- statistics -------------------------------------------------------------------
def pair_estimates(name, kernel, X, Y, D, seeds):
    P = np.vstack([X, Y])
    n = len(X)
    out = np.empty((seeds, n))
    for s in range(seeds):
        Z = FEATURE_MAPS[name](kernel=kernel, n_components=D, random_state=s).fit(P).transform(P)
        out[s] = np.einsum("ij,ij->i", Z[:n], Z[n:])
    return out


def variance_se(est):
    """Sample variance per column and its standard error (from the fourth moment)."""
    R = est.shape[0]
    m = est.mean(0)
    s2 = est.var(0, ddof=1)
    m4 = ((est - m) ** 4).mean(0)
    return s2, np.sqrt(np.maximum(m4 - s2**2 * (R - 3) / (R - 1), 0) / R)


def test_positive_features_variance_formula_and_comparison_with_rff():
    """D Var = exp(4 u.v) - k^2 (u = x/l), checked within 5 standard errors at pairs of
    moderate u.v (the terms are log-normal: at large u.v the sample variance is too heavy-
    tailed to check).  Against rff (D Var = 1 + k(2 delta)/2 - k^2): far smaller for small
    or opposite u, v, far larger for aligned points of large norm."""
    l, D, R = 1.3, 16, 3000
    X = np.array([[0.1, 0.0, 0.0], [0.3, -0.2, 0.1], [1.0, 0.5, 0.0]]) * l
    Y = np.array([[0.0, 0.1, 0.0], [-0.3, 0.2, -0.2], [-1.0, -0.5, 0.3]]) * l
    k = Gaussian(lengthscale=l).fit(None)
    est = pair_estimates("positive", k, X, Y, D, R)
    want = positive_variance(X / l, Y / l) / D
    s2, se = variance_se(est)
    assert np.all(np.abs(s2 - want) <= 5 * se), (s2, want, se)
    kk = k.k_of_delta(X - Y)
    assert np.all(np.abs(est.mean(0) - kk) <= 5 * np.sqrt(want / R))
    rff = VARIANCE_TERMS["rff"](kk, k.k_of_delta(2 * (X - Y))) / D
    assert np.all(want < rff / 10), (want, rff)
    u = v = np.array([1.5, 0.0, 0.0])  # aligned, large norm: exp(9) - 1
    assert positive_variance(u, v) == pytest.approx(math.exp(9.0) - 1.0)
    assert positive_variance(u, v) > 1000 * VARIANCE_TERMS["rff"](1.0, 1.0)


def test_tensorsketch_and_scikit_learns_agree_in_distribution():
    """Same algorithm: the means agree (both unbiased) and the variances agree within
    5 standard errors of their difference."""
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(3, 4)) * 0.6, rng.normal(size=(3, 4)) * 0.6
    k = Polynomial(lengthscale=1.0, degree=2, coef0=1.0)
    a = pair_estimates("tensorsketch", k, X, Y, 32, 1500)
    b = pair_estimates("sklearn_polysketch", k, X, Y, 32, 1500)
    (va, sa), (vb, sb) = variance_se(a), variance_se(b)
    assert np.all(np.abs(va - vb) <= 5 * np.hypot(sa, sb)), (va, vb)
    exact = k.fit(None).gram(X, Y).diagonal()
    for e in (a, b):
        assert np.all(np.abs(e.mean(0) - exact) <= 5 * e.std(0) / np.sqrt(1500))


# ---- refusals ---------------------------------------------------------------------
@pytest.mark.parametrize("overrides,match", [
    (["kernel=arccos1", "features=rff"], "features=rff is not allowed with kernel=arccos1: it "
     "samples the spectral density of a shift-invariant kernel and arccos1 is not one; use "
     "features=nystrom or arccos"),
    (["kernel=polynomial", "features=qmc"], "use features=nystrom or maclaurin or tensorsketch or "
     "sklearn_polysketch"),
    (["kernel=gaussian", "features=maclaurin"], "features=maclaurin is not allowed with "
     "kernel=gaussian: it represents the polynomial kernel"),
    (["kernel=laplacian", "features=positive"], "represent the Gaussian"),
    (["kernel=polynomial", "kernel.degree=0"], r"kernel.degree=0 is not allowed: use an integer "
     r"in 1..20"),
    (["kernel=polynomial", "kernel.coef0=-1"], r"kernel.coef0=-1.0 is not allowed"),
])
def test_impossible_pairs_name_what_works(overrides, match):
    with pytest.raises(ConfigError, match=match):
        validate(compose_config(overrides))


@pytest.mark.parametrize("features,kernel", [("arccos", "arccos0"), ("arccos", "arccos1"),
                                             ("positive", "gaussian"),
                                             ("maclaurin", "polynomial"),
                                             ("tensorsketch", "polynomial"),
                                             ("nystrom", "arccos1")])
def test_new_maps_in_every_measurement(features, kernel):
    df, _ = run(compose_config([
        "dataset=synthetic", "dataset.n=300", "dataset.d=5", f"features={features}",
        f"kernel={kernel}", "D=64", "measure.bounds.trials=10", "measure.learning.repeats=1",
        "measure.approximation.n_points=120"]))
    assert set(df.measurement) == {"approximation", "bounds", "learning", "timing"}
    approx = df[df.measurement == "approximation"].set_index("metric").value
    assert 0 < approx["rel_fro_error"] < 1
    b = df[(df.measurement == "bounds") & df.dist.isna()]
    assert b[b.metric == "eps_empirical"].value.notna().all()
    assert b[b.metric == "eps_bound"].value.isna().all()
    if kernel != "gaussian":  # not shift-invariant: said so, not computed
        s = b[b.metric == "sigma_p2"]
        assert s.value.isna().all() and s.note.str.contains("not shift-invariant").all()
    err = df[df.metric == "test_rmse"].set_index("method").value
    assert err.notna().all() and len(err) == 2
