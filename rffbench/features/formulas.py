"""Exact variances of the feature maps' kernel estimates, as functions of the kernel's
values (docs/theory.md, section 1): the i.i.d. families (Sutherland & Schneider 2015),
positive random features (Choromanski et al. 2021, Lemma 2) and orthogonal random
features (derived here).  Each map's :meth:`~rffbench.features.FeatureMap.exact_mse` uses
the one that applies to it; :mod:`rffbench.theory` re-exports them."""
from __future__ import annotations

import math

import numpy as np


def term_variance(k, k2, pairs):
    """Variance of one term of the estimate: V1 (pairs, per frequency) or V2 (rff)."""
    return (0.5 + 0.5 * k2 - k * k) if pairs else (1.0 + 0.5 * k2 - k * k)


#: D * Var[z(x).z(y)] per family as a function of (k, k2) = (k(delta), k(2 delta))
#: (docs/theory.md, section 1; pairs: two terms per frequency, 2 V1)
VARIANCE_TERMS = {
    "rff": lambda k, k2: term_variance(k, k2, False),
    "pairs": lambda k, k2: 2.0 * term_variance(k, k2, True),
}


def positive_variance(u, v):
    """D Var[z(x).z(y)] of positive random features (FAVOR+) for the Gaussian kernel at
    u = x / l, v = y / l (rows of u, v).

    Each term exp(w.(u + v) - ``|u|^2 - |v|^2``), w ~ N(0, I), has mean
    k = exp(-``|u - v|^2`` / 2) and second moment
    exp(2 ``|u + v|^2`` - 2 ``|u|^2`` - 2 ``|v|^2``) = exp(4 u.v), so D Var = exp(4 u.v) - k^2.
    Unlike the trigonometric maps it depends on u + v, not only on u - v: as
    4 u.v = ``|u + v|^2 - |u - v|^2``, it is k^2 (exp(``|u + v|^2``) - 1) (Choromanski et
    al. 2021, Lemma 2), evaluated in that form (expm1: no cancellation, exactly 0 at
    u = -v, where the estimate is exact).

    Parameters
    ----------
    u, v : ndarray of shape (n, d)
        x / l and y / l, row by row.

    Returns
    -------
    ndarray of shape (n,)
        D times the variance.
    """
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    k2 = np.exp(-np.sum((u - v) ** 2, axis=-1))
    return k2 * np.expm1(np.sum((u + v) ** 2, axis=-1))


def chi_cos_mean(t, d):
    """E cos(s t) for s ~ chi_d (the length of a d-dimensional standard normal vector):
    sum_k (-t^2 / 2)^k (d/2)_k / (k! (1/2)_k) = 1F1(d/2; 1/2; -t^2/2), evaluated as
    e^{-t^2/2} 1F1((1 - d)/2; 1/2; t^2/2) (Kummer's transformation: no cancellation)."""
    from scipy.special import hyp1f1

    t = np.asarray(t, dtype=np.float64)
    return np.exp(-0.5 * t * t) * hyp1f1(0.5 * (1 - d), 0.5, 0.5 * t * t)


def orf_pair_covariance(z, d, nodes=48):
    """Cov[cos(w_1.delta), cos(w_2.delta)] for two rows of one orthogonal block of ORF (Yu
    et al. 2016) for the Gaussian kernel at |delta| / l = z in R^d: w_i = s_i q_i / l with
    q_1, q_2 orthonormal (Haar) and s_i ~ chi_d independent.

    Derived here: (q_1.u, q_2.u) for a unit u has the law of the first two coordinates
    (u_1, u_2) of a uniform point of the sphere S^{d-1}, whose density on the unit disk is
    proportional to (1 - r^2)^{(d-4)/2}; averaging over s_i first gives
    E[psi(z u_1) psi(z u_2)] - exp(-z^2), psi = :func:`chi_cos_mean`.  Computed with
    Gauss-Jacobi nodes in t = r^2 (exact for the weight (1 - t)^{(d-4)/2}) and the
    trapezoid rule in the angle (spectrally accurate: periodic).  Its leading term in 1/d
    is -exp(-z^2) z^4 / (2 d), the reduction Yu et al.'s Theorem 1 gives (checked: within
    3% at d = 64 for z in 0.5..2).  d >= 2 (d = 2: the circle)."""
    from scipy.special import roots_jacobi

    if d < 2:
        raise ValueError(f"d={d}: one direction has no orthogonal partner")
    phi = np.linspace(0.0, 2.0 * np.pi, 4 * nodes, endpoint=False)
    if d == 2:
        r, w = np.array([1.0]), np.array([1.0])
    else:
        # t = r^2 on [0, 1], weight (1 - t)^a, a = (d - 4) / 2; Jacobi on [-1, 1]: (1-x)^a (1+x)^0
        x, wx = roots_jacobi(nodes, 0.5 * (d - 4), 0.0)
        r, w = np.sqrt((x + 1) / 2), wx / wx.sum()
    R, P = np.meshgrid(r, phi, indexing="ij")
    f = chi_cos_mean(z * R * np.cos(P), d) * chi_cos_mean(z * R * np.sin(P), d)
    return float(np.sum(w[:, None] * f) / phi.size) - math.exp(-z * z)


def orf_variance(z, n_freq, d):
    """Var of the ORF cos/sin-pair estimate (1/m) sum_i cos(w_i.delta) of the Gaussian kernel
    at ``|delta| / l`` = z: m = n_freq frequencies in blocks of d orthogonal rows (the last
    block partial), blocks independent:

        (m V_1 + sum_blocks b (b - 1) C(z)) / m^2,  V_1 = (1 - exp(-z^2))^2 / 2,

    C = :func:`orf_pair_covariance` (V_1 / m is the i.i.d. rff_pairs variance).

    Parameters
    ----------
    z : float or ndarray
        ``|delta| / l``.
    n_freq : int
        m, the number of frequencies.
    d : int
        Input dimension (the block size).

    Returns
    -------
    float or ndarray
    """
    v1 = 0.5 * (1.0 - math.exp(-z * z)) ** 2
    blocks = [d] * (n_freq // d) + ([n_freq % d] if n_freq % d else [])
    pairs = sum(b * (b - 1) for b in blocks)
    c = orf_pair_covariance(z, d) if pairs else 0.0
    return (n_freq * v1 + pairs * c) / n_freq ** 2
