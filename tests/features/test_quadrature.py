"""rffbench.features.quadrature: spherical-radial rules (centre term, exactness), the simplex
and Gauss-Hermite maps."""
import numpy as np
import pytest
from scipy.special import ndtri

from rffbench.features import FEATURE_MAPS
from rffbench.features.quadrature import simplex_vertices
from rffbench.kernels import Gaussian, make_kernel
from tests.helpers import pair_estimates

#: a family-wise false-alarm rate for the statistical checks below
ALPHA = 1e-4


def _near_pairs(kname, rng, n=4):
    """Pairs where the kernel is large: x / max-like data in the positive orthant, at small
    distance (Gaussian: |x - y| ~ 0.3 l) or small angle (arc-cosine)."""
    X = rng.uniform(0.2, 1.0, size=(n, 5))
    Y = X + rng.normal(size=X.shape) * 0.12
    return X, Y


def _estimates(kname, X, Y, seeds, **params):
    """Kernel estimates z(x).z(y) + kernel_offset_ at the pairs, one row per redraw."""
    n = len(X)
    P = np.vstack([X, Y])
    out = np.empty((seeds, n))
    for s in range(seeds):
        f = FEATURE_MAPS["ssr"](kernel=kname, n_components=4 * 6, lengthscale=1.0,
                                random_state=s, **params).fit(P)
        Z = f.transform(P)
        out[s] = np.einsum("ij,ij->i", Z[:n], Z[n:]) + f.kernel_offset_
    return out


def _rule_estimate(fm, f, d):
    """The spherical-radial estimate of E f(w), w ~ N(0, I), from a fitted ssr map's nodes
    rho Q v_j (lengthscale 1) and weights d / rho^2, with the reflected nodes."""
    N = fm.random_weights_.T
    cw = d / fm.radii_ ** 2
    return (1 - cw.mean()) * f(np.zeros((1, d)))[0] + np.mean(cw * (f(N) + f(-N)) / 2)




@pytest.mark.parametrize("kname,f0", [("gaussian", 1.0), ("arccos0", 0.5), ("arccos1", 0.0)])
def test_centre_term_is_the_rules_constant(kname, f0, rng):
    """kernel_offset_ = f(0) (1 - mean d / rho^2) over the nodes; 0 without the centre."""
    X = rng.normal(size=(10, 6))
    f = FEATURE_MAPS["ssr"](kernel=kname, n_components=2 * 7 * 3, random_state=1).fit(X)
    assert f.kernel_offset_ == pytest.approx(f0 * (1 - np.mean(6 / f.radii_ ** 2)), abs=1e-14)
    g = FEATURE_MAPS["ssr"](kernel=kname, n_components=2 * 7 * 3, random_state=1,
                            centre=False).fit(X)
    assert g.kernel_offset_ == 0.0
    np.testing.assert_array_equal(f.transform(X), g.transform(X))  # the features are the same


@pytest.mark.parametrize("kname,min_drop", [("gaussian", 20.0), ("arccos0", 1.2)])
@pytest.mark.slow
def test_centre_term_unbiased_and_lowers_the_variance(kname, min_drop):
    """With and without the centre term the mean estimate is k (z standard errors); with it,
    the variance is lower by at least ``min_drop`` beyond the sampling error of both
    variances (where k is large, as for x / max data; far apart it can raise it,
    docs/reproductions.md)."""
    rng = np.random.default_rng(3)
    X, Y = _near_pairs(kname, rng)
    k = make_kernel(kname, lengthscale=1.0).fit(None)
    exact = np.array([k.gram(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(len(X))])
    R = 3000
    z = float(ndtri(1 - ALPHA / (4 * len(X))))
    var = {}
    for centre in (True, False):
        est = _estimates(kname, X, Y, R, centre=centre)
        se = est.std(0, ddof=1) / np.sqrt(R)
        assert np.all(np.abs(est.mean(0) - exact) <= z * se), (centre, est.mean(0), exact)
        c = est - est.mean(0)
        s2 = est.var(0, ddof=1)
        se_v = np.sqrt(np.maximum(np.mean(c ** 4, 0) - s2 ** 2, 0) / R)
        var[centre] = (s2, se_v)
    (s_c, e_c), (s_n, e_n) = var[True], var[False]
    assert np.all(min_drop * (s_c + z * e_c) < s_n - z * e_n), (s_c, s_n)


@pytest.mark.parametrize("radius", ["vertex", "rule"])
@pytest.mark.slow
def test_rule_is_exact_to_degree_3_and_unbiased_at_degree_4(radius, rng):
    """Every draw integrates polynomials of degree <= 3 in w ~ N(0, I) exactly (c rho^2 = d
    cancels the radius in the quadratic terms, the simplex is a spherical 2-design, the
    reflections cancel the odd terms), with a radius per vertex or per rule; at degree 4
    a draw errs, and the mean over draws is E (a.w)^4 = 3 |a|^4."""
    d = 4
    a, b, c = rng.normal(size=d), rng.normal(size=d), rng.normal(size=d)
    X = rng.normal(size=(5, d))

    def fit(seed):
        return FEATURE_MAPS["ssr"](kernel="gaussian", n_components=2 * (d + 1),
                                   lengthscale=1.0, radius=radius, random_state=seed).fit(X)

    cubic = lambda W: (W @ a) ** 2 + (W @ b) ** 3 + W @ c + 1.0  # noqa: E731
    quartic = lambda W: (W @ a) ** 4  # noqa: E731
    fm = fit(4)
    assert _rule_estimate(fm, cubic, d) == pytest.approx(a @ a + 1.0, abs=1e-10)
    U = fm.random_weights_.T / fm.radii_[:, None]  # the nodes lie on a rotated simplex
    np.testing.assert_allclose(U @ U.T, simplex_vertices(d) @ simplex_vertices(d).T, atol=1e-12)
    exact4 = 3 * (a @ a) ** 2
    est = np.array([_rule_estimate(fit(s), quartic, d) for s in range(4000)])
    assert abs(est[0] - exact4) > 1e-3 * exact4
    z = float(ndtri(1 - ALPHA / 2))
    assert abs(est.mean() - exact4) <= z * est.std(ddof=1) / np.sqrt(est.size)


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
