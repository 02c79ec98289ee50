"""Kernel estimates with a constant term (kernel_offset_): the spherical-radial rules' centre
term, its variance, the textbook rule's exactness, and learning that ignores the constant;
the Gaussian-direction maps quffka compares (frame ORF, generalized Halton) against plain
references."""
import numpy as np
import pytest
from scipy.special import ndtri

from rffbench.exact import with_intercept
from rffbench.features import FEATURE_MAPS, MapTags
from rffbench.features.qmc import generalized_halton
from rffbench.features.quadrature import simplex_vertices
from rffbench.kernels import make_kernel
from rffbench.models import FeatureRidge

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
    variances (where k is large, as for x / max data; far apart it can raise it, docs/reproductions.md)."""
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


def _rule_estimate(fm, f, d):
    """The spherical-radial estimate of E f(w), w ~ N(0, I), from a fitted ssr map's nodes
    rho Q v_j (lengthscale 1) and weights d / rho^2, with the reflected nodes."""
    N = fm.random_weights_.T
    cw = d / fm.radii_ ** 2
    return (1 - cw.mean()) * f(np.zeros((1, d)))[0] + np.mean(cw * (f(N) + f(-N)) / 2)


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


def test_ridge_ignores_a_constant_added_to_the_kernel(rng):
    """The unpenalised intercept absorbs the offset: ridge on [Z, sqrt(c) 1] equals ridge on
    Z (c > 0), and kernel ridge with Z Z^T + c (any sign, the bordered dual) equals both."""
    X = rng.uniform(0, 1, size=(150, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=150)
    Y = np.stack([y, 1 - y], axis=1)
    fmap = FEATURE_MAPS["ssr"](kernel="gaussian", n_components=2 * 4 * 4, lengthscale=0.5,
                               random_state=0).fit(X)
    c = fmap.kernel_offset_
    assert c != 0

    class WithColumn:  # the map with its offset as a constant column: Z Z^T + |c|
        n_components, tags = fmap.n_components_ + 1, MapTags()

        def transform(self, A):
            return np.hstack([fmap.transform(A), np.full((A.shape[0], 1), np.sqrt(abs(c)))])

    lam = 1e-2
    plain = FeatureRidge(lam).fit(fmap, X, Y)
    col = FeatureRidge(lam).fit(WithColumn(), X, Y)
    Xt = rng.uniform(0, 1, size=(40, 3))
    np.testing.assert_allclose(col.predict(Xt), plain.predict(Xt), rtol=0, atol=1e-9)
    assert abs(col.coef_[-1]).max() < 1e-9  # the constant column gets no weight
    Z, Zt = fmap.transform(X), fmap.transform(Xt)
    for cc in (c, -abs(c), -5.0, 5.0):  # K + lam I may be indefinite for c < 0: LU
        A = Z @ Z.T + cc + lam * np.eye(len(X))
        alpha, b = with_intercept(lambda B: np.linalg.solve(A, B), Y)
        np.testing.assert_allclose((Zt @ Z.T + cc) @ alpha + b, plain.predict(Xt), rtol=0,
                                   atol=1e-8)


def test_generalized_halton_against_a_digit_by_digit_reference():
    """Point k (from 1) in the j-th prime base: sum_i sigma_j(a_i) p_j^-(i+1), sigma_j a
    permutation fixing 0 (ghalton's construction), and the same permutations for one seed."""
    m, u = 60, 5
    T = generalized_halton(m, u, np.random.default_rng(8))
    rng = np.random.default_rng(8)
    for j, p in enumerate((2, 3, 5, 7, 11)):
        sigma = np.concatenate([[0], 1 + rng.permutation(p - 1)])
        for k in range(1, m + 1):
            v, f, r = 0.0, 1.0 / p, k
            while r:
                v += sigma[r % p] * f
                r //= p
                f /= p
            assert T[k - 1, j] == pytest.approx(v, abs=1e-15)
    assert np.all((T > 0) & (T < 1)) and np.unique(T[:, 0]).size == m


def test_frame_layout_is_a_scaled_tight_frame(rng):
    """orf layout=frame: W l = diag(s) Q with Q^T Q = I (one m x d frame, m > d), s ~ chi_m;
    a row of Q has squared norm Beta(d/2, (m-d)/2), so |w|^2 l^2 is chi_d^2 (mean d,
    variance 2d), the law of a Gaussian row.  layout=blocks: orthonormal rows per block."""
    X = rng.normal(size=(20, 6))
    norms2 = []
    for s in range(300):
        f = FEATURE_MAPS["orf"](kernel="gaussian", n_components=2 * 30, lengthscale=2.0,
                                layout="frame", random_state=s).fit(X)
        W = f.random_weights_.T * 2.0
        Q = W / f.row_scales_[:, None]
        np.testing.assert_allclose(Q.T @ Q, np.eye(6), atol=1e-12)
        norms2.append(np.sum(W * W, axis=1))
    norms2 = np.concatenate(norms2)
    assert norms2.mean() == pytest.approx(6.0, abs=5 * np.sqrt(12.0 / norms2.size))
    assert norms2.var() == pytest.approx(12.0, rel=0.1)
    f = FEATURE_MAPS["orf"](kernel="gaussian", n_components=2 * 8, lengthscale=2.0,
                            random_state=0).fit(X)
    Q = f.random_weights_.T * 2.0 / f.row_scales_[:, None]
    np.testing.assert_allclose(Q[:6] @ Q[:6].T, np.eye(6), atol=1e-12)
