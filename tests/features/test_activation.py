"""rffbench.features.activation: positive random features, their variance formula."""
import math

import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS
from rffbench.kernels import Gaussian
from rffbench.theory import VARIANCE_TERMS, positive_variance
from tests.helpers import pair_estimates, variance_se


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


def test_orthogonal_positive_features_are_the_definition():
    """positive_orf: blocks of d orthogonal rows with chi_d lengths (W l = diag(lengths) Q),
    features exp(w.x / l - |x|^2 / l^2) / sqrt(D) as plain numpy computes them, in float64
    and float32, at D not a multiple of d (the last block cut)."""

    rng = np.random.default_rng(0)
    d, D, ls = 4, 10, 1.3
    X = rng.normal(size=(7, d)) * 0.5
    f = FEATURE_MAPS["positive_orf"](kernel="gaussian", n_components=D, lengthscale=ls,
                                     random_state=3).fit(X)
    W = f.random_weights_.T * ls  # (D, d): rows w
    for s in range(0, D, d):
        B = W[s:s + d]
        G = B @ B.T
        np.testing.assert_allclose(G, np.diag(np.diag(G)), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(W, axis=1), f.row_scales_, rtol=1e-12)
    ref = np.exp(X @ W.T / ls - (X**2).sum(1, keepdims=True) / ls**2) / np.sqrt(D)
    np.testing.assert_allclose(f.transform(X), ref, rtol=1e-12)
    f32 = FEATURE_MAPS["positive_orf"](kernel="gaussian", n_components=D, lengthscale=ls,
                                       random_state=3).fit(X.astype(np.float32))
    np.testing.assert_allclose(f32.transform(X.astype(np.float32)), ref, rtol=2e-5)


def test_orthogonal_positive_features_have_a_smaller_error_than_iid_ones():
    """Choromanski et al. 2021, Theorem 2: orthogonal directions lower the mean squared error
    of the positive estimate of the Gaussian kernel.  At d = D = 16 on a pair of small
    norm, over 3000 redraws each, the i.i.d. MSE exceeds the orthogonal one by more than
    4 standard errors of the difference (estimated from the redraws)."""

    rng = np.random.default_rng(1)
    d = D = 16
    x = rng.normal(size=d) * 0.15
    y = x + rng.normal(size=d) * 0.1
    P = np.vstack([x, y])
    k = np.exp(-((x - y) ** 2).sum() / 2)
    sq = {}
    for name in ("positive", "positive_orf"):
        e = []
        for s in range(3000):
            Z = FEATURE_MAPS[name](kernel="gaussian", n_components=D, lengthscale=1.0,
                                   random_state=s).fit(P).transform(P)
            e.append(Z[0] @ Z[1] - k)
        sq[name] = np.square(e)
    diff = sq["positive"].mean() - sq["positive_orf"].mean()
    se = np.sqrt(sq["positive"].var(ddof=1) / 3000 + sq["positive_orf"].var(ddof=1) / 3000)
    assert diff > 4 * se, (diff, se)
