"""Gaussian-process posteriors at m test points, exact and from random features, each as the
Gaussian N(mean, cov) of the function values it gives (docs/theory.md, "Posterior samples").

The data: y = f(X) + e, e ~ N(0, noise I), f a GP with kernel k; the test points X_s.  With
K the kernel's Gram matrices and Z, Z_s one draw of a map's features of X and X_s
(z(x) . z(x') estimates k(x, x')):

* :func:`exact`: mean = K_sn (K_nn + noise I)^-1 y, cov = K_ss - K_sn (K_nn + noise I)^-1 K_ns
  (:func:`exact_cov`: the covariance alone, from :func:`update`'s factor);
* :func:`weight_space`: Bayesian linear regression on the features, prior w ~ N(0, I_D):
  with A = Z^T Z + noise I_D, mean = Z_s A^-1 Z^T y and cov = noise Z_s A^-1 Z_s^T, the
  distribution of f_s = Z_s w for w from its posterior;
* :func:`decoupled`: the pathwise (Matheron) sampler of Wilson et al. (ICML 2020),
  f_s = Z_s w + M (y - Z w - e) with w ~ N(0, I_D), e ~ N(0, noise I) and
  M = K_sn (K_nn + noise I)^-1 (the exact kernel's update): mean = M y (the exact mean for
  any map) and cov = (Z_s - M Z)(Z_s - M Z)^T + noise M M^T.  Its covariance less the exact
  one is B (G - K) B^T, linear in the features' Gram error G - K on the joint points
  [X; X_s], with B = [-M, I]: for an unbiased map its expectation is the exact covariance;
* :func:`w2`: the 2-Wasserstein distance between two Gaussians (:func:`sqrt_psd`: the
  covariance's square root it takes).

Each sampler's distribution is a closed form given the features: no Monte Carlo is needed
to measure its distance from the exact posterior (tests/test_posterior.py draws 10^4
functions from each and checks the forms against them).  Linear algebra in float64."""
from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from .errors import ConfigError, RangeError


def _psd_sym(S):
    return 0.5 * (S + S.T)


def _check_noise(noise):
    if not np.isfinite(noise) or noise <= 0:
        raise ConfigError(f"noise={noise!r} is not allowed: the observation noise variance "
                          "must be a number > 0")


def update(K_nn, K_sn, noise):
    """M = K_sn (K_nn + noise I)^-1 (m x n), and the Cholesky factor it came from."""
    _check_noise(noise)
    n = K_nn.shape[0]
    try:
        c = cho_factor(K_nn + noise * np.eye(n), lower=True, check_finite=True)
    except np.linalg.LinAlgError:
        raise RangeError(f"K + noise I is not positive definite at noise={noise:g}: the "
                         "kernel's Gram is not (numerically) positive semi-definite") from None
    return cho_solve(c, K_sn.T).T, c


def exact(K_nn, K_sn, K_ss, y, noise):
    """The exact GP posterior at the test points: (mean (m,), cov (m, m))."""
    M, factor = update(K_nn, K_sn, noise)
    return M @ y, exact_cov(K_sn, K_ss, factor)


def exact_cov(K_sn, K_ss, factor):
    """The exact posterior's covariance K_ss - K_sn (K_nn + noise I)^-1 K_ns from the
    Cholesky factor :func:`update` returns (no targets needed)."""
    L, lower = factor
    V = solve_triangular(L, K_sn.T, lower=lower)
    return _psd_sym(K_ss - V.T @ V)


def weight_space(Z, Z_s, y, noise):
    """Bayesian linear regression on the features Z (n x D), Z_s (m x D), prior w ~ N(0, I):
    the distribution of Z_s w, (mean, cov)."""
    _check_noise(noise)
    D = Z.shape[1]
    L = np.linalg.cholesky(Z.T @ Z + noise * np.eye(D))
    W = solve_triangular(L, Z_s.T, lower=True)  # L^-1 Z_s^T: A^-1 = L^-T L^-1
    b = solve_triangular(L, Z.T @ y, lower=True)
    return W.T @ b, _psd_sym(noise * (W.T @ W))


def decoupled(Z, Z_s, M, y, noise):
    """The pathwise sampler with the features' prior and the exact kernel's update ``M``
    (:func:`update`): (mean, cov)."""
    _check_noise(noise)
    R = Z_s - M @ Z
    return M @ y, _psd_sym(R @ R.T + noise * (M @ M.T))


def sqrt_psd(S):
    """The symmetric square root of a covariance (negative rounding clipped to 0)."""
    w, V = np.linalg.eigh(_psd_sym(S))
    return (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T


def w2(mean_a, cov_a, mean_b, cov_b, sqrt_b=None):
    """The 2-Wasserstein distance between N(mean_a, cov_a) and N(mean_b, cov_b):
    sqrt(|mean_a - mean_b|^2 + tr(cov_a + cov_b - 2 (cov_a^1/2 cov_b cov_a^1/2)^1/2)), the
    last trace as the sum of the singular values of cov_a^1/2 cov_b^1/2 (their product's
    eigenvalues would square its condition number).  Its rounding: about
    sqrt(m eps (tr cov_a + tr cov_b)) for m points, ~1e-7 for traces of order 1.  ``sqrt_b``:
    :func:`sqrt_psd` of cov_b, when one cov_b is compared with many."""
    sqrt_b = sqrt_psd(cov_b) if sqrt_b is None else sqrt_b
    cross = np.linalg.svd(sqrt_psd(cov_a) @ sqrt_b, compute_uv=False)
    bures = np.trace(cov_a) + np.trace(cov_b) - 2.0 * float(np.sum(cross))
    return float(np.sqrt(max(float(np.sum((mean_a - mean_b) ** 2)) + bures, 0.0)))
