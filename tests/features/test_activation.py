"""rffbench.features.activation: positive random features, their variance formula."""
import math

import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS
from rffbench.kernels import Gaussian
from rffbench.theory import VARIANCE_TERMS, positive_variance


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
