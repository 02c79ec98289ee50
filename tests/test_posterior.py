"""rffbench.posterior: the exact GP posterior and the two random-feature samplers' Gaussians
against plain numpy, against 10^4 functions actually drawn from each sampler, and against
the known sampler bugs; the 2-Wasserstein distance against its cases in closed form."""
import numpy as np
import pytest

from rffbench import posterior as post
from rffbench.errors import ConfigError
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel


def _problem(n, m, d, seed=0, ls=0.7):
    rng = np.random.default_rng(seed)
    X, Xs = rng.uniform(0, 1, (n, d)), rng.uniform(0, 1, (m, d))
    k = make_kernel("gaussian", lengthscale=ls).fit(X)
    y = np.sin(3 * X.sum(1)) + 0.1 * rng.standard_normal(n)
    return X, Xs, y, k


def _features(k, X, Xs, D, seed=0):
    fmap = FEATURE_MAPS["rff_pairs"](kernel="gaussian", n_components=D, random_state=seed,
                                     lengthscale=k.lengthscale).fit(X)
    return fmap.transform(X), fmap.transform(Xs)


@pytest.mark.parametrize("n,m,d", [(1, 1, 1), (2, 5, 1), (7, 3, 2), (30, 12, 4)])
def test_exact_is_the_textbook_formula(n, m, d):
    X, Xs, y, k = _problem(n, m, d)
    noise = 0.05
    mean, cov = post.exact(k.gram(X), k.gram(Xs, X), k.gram(Xs), y, noise)
    inv = np.linalg.inv(k.gram(X) + noise * np.eye(n))
    np.testing.assert_allclose(mean, k.gram(Xs, X) @ inv @ y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cov, k.gram(Xs) - k.gram(Xs, X) @ inv @ k.gram(X, Xs),
                               rtol=1e-9, atol=1e-12)
    assert cov.shape == (m, m) and np.allclose(cov, cov.T)


@pytest.mark.parametrize("n,m", [(1, 1), (6, 4), (25, 10)])
def test_exact_features_give_the_exact_posterior_from_both_samplers(n, m):
    """Features whose Gram is the kernel's exactly (a Cholesky factor of the joint Gram):
    both samplers are then the exact posterior (W2 ~ 0), the weight-space one with D = n + m
    features and the decoupled one with any update."""
    X, Xs, y, k = _problem(n, m, 3, seed=1)
    J = k.gram(np.vstack([X, Xs]))
    F = np.linalg.cholesky(J + 1e-12 * np.eye(n + m))
    Z, Zs, noise = F[:n], F[n:], 0.1
    K_nn, K_sn, K_ss = Z @ Z.T, Zs @ Z.T, Zs @ Zs.T  # the features' kernel, exactly
    m_e, c_e = post.exact(K_nn, K_sn, K_ss, y, noise)
    M, _ = post.update(K_nn, K_sn, noise)
    for got in (post.weight_space(Z, Zs, y, noise), post.decoupled(Z, Zs, M, y, noise)):
        np.testing.assert_allclose(got[0], m_e, atol=1e-9)
        np.testing.assert_allclose(got[1], c_e, atol=1e-9)
        assert post.w2(*got, m_e, c_e) < 1e-4


def test_w2_of_its_closed_form_cases():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((6, 6))
    S = A @ A.T
    mu = rng.standard_normal(6)
    eps = np.finfo(float).eps  # its rounding, within 10x of sqrt(m eps (tr S + tr S))
    assert post.w2(mu, S, mu, S) < 10 * np.sqrt(6 * eps * 2 * np.trace(S))
    assert post.w2(np.zeros(1), np.eye(1) * 4.0, np.ones(1) * 3.0, np.eye(1)) == \
        pytest.approx(np.hypot(3.0, 2.0 - 1.0))  # 1-d: means and standard deviations
    a, b = rng.uniform(0.1, 2, 5), rng.uniform(0.1, 2, 5)  # commuting (diagonal)
    want = np.sqrt(np.sum((mu[:5] - 1) ** 2) + np.sum((np.sqrt(a) - np.sqrt(b)) ** 2))
    assert post.w2(mu[:5], np.diag(a), np.ones(5), np.diag(b)) == pytest.approx(want)
    B = rng.standard_normal((6, 6))
    T = B @ B.T  # symmetric in its arguments, and the triangle inequality
    assert post.w2(mu, S, 0 * mu, T) == pytest.approx(post.w2(0 * mu, T, mu, S), rel=1e-6)
    assert post.w2(mu, S, 0 * mu, T) <= post.w2(mu, S, mu, T) + post.w2(mu, T, 0 * mu, T) \
        + 1e-9


def _draws(kind, Z, Zs, M, y, noise, N, rng):
    """N functions actually drawn at the test points (N x m), as a library draws them."""
    D = Z.shape[1]
    if kind == "weight_space":
        A = Z.T @ Z + noise * np.eye(D)
        w_bar = np.linalg.solve(A, Z.T @ y)
        L = np.linalg.cholesky(noise * np.linalg.inv(A))
        W = w_bar + rng.standard_normal((N, D)) @ L.T
        return W @ Zs.T
    W = rng.standard_normal((N, D))  # decoupled: prior path, then the exact update
    E = np.sqrt(noise) * rng.standard_normal((N, Z.shape[0]))
    return W @ Zs.T + (y - W @ Z.T - E) @ M.T


@pytest.mark.parametrize("kind", ["weight_space", "decoupled"])
def test_ten_thousand_drawn_functions_have_the_closed_forms_moments(kind):
    """Mean within 5 standard errors (sqrt(cov_ii / N)), each covariance entry within 5 of
    its standard errors (sqrt((S_ii S_jj + S_ij^2) / N)), and the W2 of the draws' Gaussian to
    the exact posterior within the sampling distance expected of N draws (E W2^2 <=
    tr S (1 + (m + 2) / 8) / N, taken 10 times) of the closed form's."""
    X, Xs, y, k = _problem(20, 5, 2, seed=4)
    noise, N = 0.01, 10_000
    Z, Zs = _features(k, X, Xs, 16, seed=2)
    M, _ = post.update(k.gram(X), k.gram(Xs, X), noise)
    mean, cov = post.weight_space(Z, Zs, y, noise) if kind == "weight_space" else \
        post.decoupled(Z, Zs, M, y, noise)
    F = _draws(kind, Z, Zs, M, y, noise, N, np.random.default_rng(9))
    d = np.sqrt(np.diag(cov))
    assert np.all(np.abs(F.mean(0) - mean) <= 5 * d / np.sqrt(N))
    se = np.sqrt((np.outer(d ** 2, d ** 2) + cov ** 2) / N)
    assert np.all(np.abs(np.cov(F.T) - cov) <= 5 * se)
    m_e, c_e = post.exact(k.gram(X), k.gram(Xs, X), k.gram(Xs), y, noise)
    expected_sq = np.trace(cov) * (1 + (len(mean) + 2) / 8) / N
    assert abs(post.w2(F.mean(0), np.cov(F.T), m_e, c_e) - post.w2(mean, cov, m_e, c_e)) <= \
        np.sqrt(10 * expected_sq)


@pytest.mark.parametrize("bug", ["targets ignored", "one side scaled"])
def test_the_known_sampler_bugs_are_an_order_of_magnitude_away(bug):
    """BoTorch #2337 (the update ignored the targets) and GPJax #326 (one argument's
    features scaled): the weight-space sampler so broken is >= 10x farther from the exact
    posterior (W2) than the correct one, at D = 1024 features."""
    X, Xs, y, k = _problem(40, 20, 2, seed=5)
    noise = 1e-2
    Z, Zs = _features(k, X, Xs, 1024, seed=3)
    exact = post.exact(k.gram(X), k.gram(Xs, X), k.gram(Xs), y, noise)
    right = post.w2(*post.weight_space(Z, Zs, y, noise), *exact)
    wrong = post.weight_space(Z, Zs, 0 * y, noise) if bug == "targets ignored" else \
        post.weight_space(Z, 2.0 * Zs, y, noise)
    assert post.w2(*wrong, *exact) >= 10 * right, (post.w2(*wrong, *exact), right)


@pytest.mark.parametrize("noise", [0.0, -1.0, float("nan"), float("inf")])
def test_a_noise_that_is_not_a_positive_number_is_one_line(noise):
    X, Xs, y, k = _problem(4, 2, 1)
    Z, Zs = _features(k, X, Xs, 8)
    for call in (lambda: post.exact(k.gram(X), k.gram(Xs, X), k.gram(Xs), y, noise),
                 lambda: post.weight_space(Z, Zs, y, noise),
                 lambda: post.decoupled(Z, Zs, np.zeros((2, 4)), y, noise)):
        with pytest.raises(ConfigError, match=r"noise=.* is not allowed: the observation "
                                              r"noise variance must be a number > 0"):
            call()


def test_the_decoupled_covariance_error_is_linear_in_the_gram_error():
    """Cov - Sigma = B (G - K) B^T with B = [-M, I] and G the features' Gram on the joint
    points (docs/theory.md): the decoupled sampler's error is its map's Gram error, mapped."""
    X, Xs, y, k = _problem(15, 6, 3, seed=7)
    noise = 0.02
    Z, Zs = _features(k, X, Xs, 32, seed=4)
    M, _ = post.update(k.gram(X), k.gram(Xs, X), noise)
    _, cov = post.decoupled(Z, Zs, M, y, noise)
    _, sigma = post.exact(k.gram(X), k.gram(Xs, X), k.gram(Xs), y, noise)
    J = np.vstack([X, Xs])
    F = np.vstack([Z, Zs])
    B = np.hstack([-M, np.eye(len(Xs))])
    np.testing.assert_allclose(cov - sigma, B @ (F @ F.T - k.gram(J)) @ B.T, atol=1e-10)


def test_a_gram_that_is_not_positive_semi_definite_is_one_line():
    from rffbench.errors import RangeError

    with pytest.raises(RangeError, match=r"K \+ noise I is not positive definite at "
                                         r"noise=0.01: the kernel's Gram is not"):
        post.update(-np.eye(3), np.zeros((2, 3)), 0.01)
