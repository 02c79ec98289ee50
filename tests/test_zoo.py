"""Kernels that are not shift-invariant and their maps: exact Grams against scikit-learn
or closed forms, fast transforms against explicit computations, positive random
features' variance, peers in distribution, and the refusals that name what works."""
import math

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel

from conftest import compose_config
from references import arccos_reference
from rffbench import _numba as nbk
from rffbench.config import validate
from rffbench.errors import ConfigError
from rffbench.experiment import run
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import ArcCosine0, ArcCosine1, Gaussian, Polynomial
from rffbench.theory import VARIANCE_TERMS, positive_variance


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
    np.testing.assert_allclose(k.maclaurin_coefficients(), [0.125, 3 * 0.25 / 1.7**2,
                                                  3 * 0.5 / 1.7**4, 1 / 1.7**6])


# ---- numba passes against numpy ---------------------------------------------------
def test_numba_passes_match_numpy(rng):
    Z = rng.normal(size=(50, 33))
    Z[::7, ::5] = 0.0  # the step's midpoint at exactly 0
    tol = np.abs(Z).max(axis=1) * 0.05  # and within a per-row tolerance of 0
    Zt = np.where(np.abs(Z) <= tol[:, None], 0.0, Z)
    for code, ref, zero in ((nbk.ACT_STEP, np.heaviside(Z, 0.5) * 0.3, np.empty(0)),
                            (nbk.ACT_STEP, np.heaviside(Zt, 0.5) * 0.3, tol),
                            (nbk.ACT_RELU, np.maximum(Z, 0) * 0.3, np.empty(0)),
                            (nbk.ACT_IDENTITY, Z * 0.3, np.empty(0))):
        A = Z.copy()
        nbk.activation_inplace(A, code, 0.3, zero)
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
     "features=orf or sorf or fastfood or circulant or qmc or arccos or ssr or gauss_hermite or "
     "nystrom"),
    (["kernel=polynomial", "features=qmc"], "use features=maclaurin or tensorsketch or "
     "sklearn_polysketch or compact or nystrom"),
    (["kernel=gaussian", "features=maclaurin"], "features=maclaurin is not allowed with "
     "kernel=gaussian: it samples the Maclaurin series"),
    (["kernel=laplacian", "features=positive"], "represent the Gaussian"),
    (["kernel=polynomial", "kernel.degree=0"], r"kernel.degree=0 is not allowed: use an integer "
     r"in 1..20"),
    (["kernel=polynomial", "kernel.coef0=-1"], r"kernel.coef0=-1.0 is not allowed"),
])
def test_impossible_pairs_name_what_works(overrides, match):
    with pytest.raises(ConfigError, match=match):
        validate(compose_config(overrides))


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


def test_negative_data_is_refused_with_the_fix(tmp_path, capsys):
    from rffbench.experiment import main as run_main

    cfg = compose_config(["kernel=additive_chi2", "features=nystrom", "D=32",
                          "measure.bounds.trials=3"])  # digits, standardised: negatives
    assert run_main(cfg, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "kernel=additive_chi2 needs non-negative data" in err and \
        "dataset.scale=none" in err and "\n" not in err
    assert not (tmp_path / "records.csv").exists()


def test_chi2_runs_on_raw_pixels():
    """digits' raw pixel counts (0..16): the additive chi2 peer and the skewed chi2 kernel
    through rff, whose bounds apply in log(x + c)."""
    common = ["dataset.scale=none", "measure.bounds.trials=10",
              "measure.learning.repeats=1", "measure.approximation.n_points=200",
              "dataset.n_max=400"]
    df, _ = run(compose_config(["kernel=additive_chi2", "features=sklearn_chi2", "D=192",
                                *common]))
    approx = df[df.measurement == "approximation"].set_index("metric").value
    assert 0 < approx["rel_fro_error"] < 0.1 and (df.D == 192).all()
    df, _ = run(compose_config(["kernel=skewed_chi2", "features=rff", "D=256", *common]))
    b = df[(df.measurement == "bounds") & df.dist.isna() & (df.metric == "eps_bound")]
    assert b[b.method == "hoeffding"].value.notna().all()
    s = df[df.metric == "sigma_p2"].value.iloc[0]
    assert s == pytest.approx(64 / (4 * df.lengthscale.iloc[0] ** 2))


@pytest.mark.parametrize("overrides,match", [
    (["kernel=additive_chi2", "features=sklearn_chi2", "D=100", "dataset.scale=none"],
     r"D=100 is not allowed for features=sklearn_chi2 with d=64: .* use D=64, 192 or 320"),
    (["kernel=skewed_chi2", "features=sklearn_skewed_chi2", "dataset.scale=none"],
     r"features=sklearn_skewed_chi2 needs kernel.lengthscale=1"),
    (["kernel=skewed_chi2", "kernel.skewedness=0"], r"kernel.skewedness=0.0 is not allowed"),
    (["features=ssr", "D=100"], r"D=100 is not allowed for features=ssr with d=64: .* use a "
                                r"multiple of 130, e.g. D=130 or D=260 \(or D_n=n"),
])
def test_sizes_and_scales_that_cannot_work(overrides, match, tmp_path, capsys):
    from rffbench.experiment import main as run_main

    cfg = compose_config([*overrides, "measure.bounds.trials=3", "measure.learning.enabled=false"])
    assert run_main(cfg, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    import re
    assert re.search(match, err), err


# ---- spherical-radial quadrature -----------------------------------------------------
def test_simplex_and_ssr_against_explicit_features(rng):
    from rffbench.features.quadrature import simplex_vertices

    for d in (1, 2, 5, 16):
        V = simplex_vertices(d)
        G = V @ V.T
        np.testing.assert_allclose(np.diag(G), 1.0, atol=1e-12)
        np.testing.assert_allclose(G[~np.eye(d + 1, dtype=bool)], -1.0 / d, atol=1e-12)
    X = rng.normal(size=(7, 4))
    for kname in ("gaussian", "arccos1", "arccos0"):
        f = FEATURE_MAPS["ssr"](kernel=kname, lengthscale=1.3, n_components=30,
                                random_state=2).fit(X)
        assert f.n_rules_ == 3 and f.transform(X).shape == (7, 30)
        A = X @ f.random_weights_
        w = f.node_weights_
        if kname == "gaussian":
            ref = np.hstack([np.cos(A) * w, np.sin(A) * w])
        else:
            g = (lambda t: (t > 0) * 1.0) if kname == "arccos0" else (lambda t: np.maximum(t, 0))
            ref = np.hstack([g(A) * w, g(-A) * w])
        np.testing.assert_allclose(f.transform(X), ref, atol=1e-13)
        # each rule: d + 1 nodes on a rotated simplex, of length rho / l with a radius per
        # vertex (the default) or one per rule
        N = f.random_weights_.T * 1.3
        np.testing.assert_allclose(np.linalg.norm(N, axis=1), f.radii_, rtol=1e-12)
        U = N[:5] / f.radii_[:5, None]
        np.testing.assert_allclose(U @ U.T, simplex_vertices(4) @ simplex_vertices(4).T,
                                   atol=1e-12)
        r = FEATURE_MAPS["ssr"](kernel=kname, n_components=30, radius="rule",
                                random_state=2).fit(X).radii_
        assert np.all(r.reshape(3, 5) == r.reshape(3, 5)[:, :1]) and np.unique(r).size == 3


def test_D_n_sets_D_from_the_data_dimension():
    df, _ = run(compose_config(["dataset=synthetic", "dataset.n=200", "dataset.d=5",
                                "features=ssr", "D_n=2", "measure.bounds.trials=3",
                                "measure.learning.enabled=false"]))
    assert (df.D == 2 * 2 * (5 + 1)).all() and (df.n_freq == 12).all()


def test_leverage_parameters_and_weights(rng):
    """Its draws follow the leverages: weights are 1/sqrt(m M q); bad parameters name the key."""
    X = rng.normal(size=(200, 3))
    f = FEATURE_MAPS["leverage"](kernel=Gaussian(lengthscale=1.0), n_components=40,
                                 random_state=0, oversample=3).fit(X)
    assert f.n_candidates_ == 60 and f.fit_rows_ == 200 and f.leverage_.shape == (60,)
    q = f.leverage_ / f.leverage_.sum()
    # each drawn frequency is weighted by 1/sqrt(m M q) of its candidate
    np.testing.assert_allclose(f.feature_weights_, np.sqrt(1 / (20 * 60 * q[f.picked_])),
                               rtol=1e-12)
    assert np.all(f.leverage_ >= 0) and np.all(f.leverage_ <= 2 + 1e-12)  # two columns each
    with pytest.raises(ConfigError, match=r"features.params.oversample=0 is not allowed"):
        validate(compose_config(["features=leverage", "D=64", "+features.params.oversample=0"]))
    with pytest.raises(ConfigError, match=r"features.params.leverage_lam=-1.0 is not allowed"):
        validate(compose_config(["features=leverage", "D=64",
                                 "+features.params.leverage_lam=-1.0"]))


def test_gauss_hermite_mean_is_the_grid_value_and_the_grid_converges_to_k():
    """E z(x).z(y) = the tensor rule's value (5 SE over redraws); the rule's error against
    the Gaussian kernel shrinks with the nodes."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(4, 3))
    Y = X + rng.normal(size=(4, 3)) * 0.8
    k = Gaussian(lengthscale=1.2).fit(None)
    exact = k.k_of_delta(X - Y)
    gaps = {}
    for m in (2, 3, 8):
        f = FEATURE_MAPS["gauss_hermite"](kernel=k, n_components=2, nodes=m).fit(X)
        gaps[m] = np.max(np.abs(f.grid_kernel(X - Y) - exact))
    assert gaps[8] < 1e-5 < gaps[3] < gaps[2], gaps
    est = pair_estimates("gauss_hermite", k, X, Y, 32, 1500)  # the default: 5 nodes
    f = FEATURE_MAPS["gauss_hermite"](kernel=k, n_components=32).fit(X)
    assert f.nodes == 5
    grid = f.grid_kernel(X - Y)
    se = est.std(0) / np.sqrt(1500)
    assert np.all(np.abs(est.mean(0) - grid) <= 5 * se)


def test_data_dependent_maps_say_so_in_their_records():
    df, _ = run(compose_config(["dataset=synthetic", "dataset.n=200", "dataset.d=3",
                                "features=leverage", "D=32", "measure.bounds.enabled=false",
                                "measure.learning.enabled=false", "measure.timing.enabled=false"]))
    note = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")].note.iloc[0]
    assert "data-dependent map: fitted on the 150 training rows" in note
