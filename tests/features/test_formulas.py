"""rffbench.features.formulas: each map's exact mean and variance against redraws."""
import math

import numpy as np
import pytest

from rffbench.kernels import make_kernel
from rffbench.theory import estimate_mse
from tests.helpers import pair_estimates

#: the light-tailed estimates (products of two projections); Random Maclaurin's products of
#: up to 2p projections are heavy-tailed (600 redraws give sample variances 0.75-3.5x the
#: formula's, from the fourth moment's own noise): their formula is checked by enumeration
VARIANCE_CASES = [("gaussian_rp", "linear", {}, {}), ("countsketch", "linear", {}, {})]


@pytest.mark.parametrize("name,kname,kparams,params", VARIANCE_CASES,
                         ids=[f"{c[0]}-{c[1]}" + "".join(f"-{k}" for k in c[3])
                              for c in VARIANCE_CASES])
def test_mean_and_variance_match_the_exact_formulas(name, kname, kparams, params, rng):
    """Mean within 4.5 standard errors of k, sample variance within 4.5 standard errors (from
    the fourth moment) of exact_mse, at 6 pairs over 600 redraws (fixed seeds)."""
    d, D, R = 12, 24, 600
    X = rng.normal(size=(6, d)) / math.sqrt(d)
    Y = X + rng.normal(size=(6, d)) * np.linspace(0.1, 1.0, 6)[:, None] / math.sqrt(d)
    k = make_kernel(kname, lengthscale=0.9, **kparams)
    est = pair_estimates(name, k, X, Y, D, R, **params)
    exact = np.array([k.gram(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(6)])
    kf = make_kernel(kname, lengthscale=0.9, **kparams).fit(None)
    theory = np.array([estimate_mse(name, kf, X[i], Y[i], D, **params) for i in range(6)])
    mean, s2 = est.mean(0), est.var(0, ddof=1)
    assert np.all(np.abs(mean - exact) <= 4.5 * np.sqrt(s2 / R))
    m4 = ((est - mean) ** 4).mean(0)
    se_v = np.sqrt(np.maximum(m4 - s2**2 * (R - 3) / (R - 1), 0) / R)
    assert np.all(np.abs(s2 - theory) <= 4.5 * se_v), (s2, theory, se_v)


@pytest.mark.parametrize("d", [2, 3, 7])
def test_orf_pair_covariance_matches_sampled_orthogonal_pairs(d):
    """Cov[cos(w_1.delta), cos(w_2.delta)] for two orthogonal rows w_i = s_i q_i (Haar q,
    s_i ~ chi_d) against 200,000 sampled pairs, within 5 standard errors of a sample
    covariance (d = 2 is the circle, its own branch); d = 1 has no orthogonal partner."""
    from rffbench.features.formulas import orf_pair_covariance

    rng = np.random.default_rng(d)
    n, z = 200_000, 1.1
    g = rng.normal(size=(n, d, 2))
    q, _ = np.linalg.qr(g)  # two orthonormal columns; their law is Haar's up to signs
    s = np.sqrt(rng.chisquare(d, size=(n, 2)))
    u = np.zeros(d)
    u[0] = z  # the law is rotation invariant: delta along the first axis
    c = np.cos(s * np.einsum("i,nij->nj", u, q))
    prod = (c[:, 0] - c[:, 0].mean()) * (c[:, 1] - c[:, 1].mean())
    want = orf_pair_covariance(z, d)
    assert abs(prod.mean() - want) <= 5 * prod.std() / math.sqrt(n), (prod.mean(), want)
    with pytest.raises(ValueError, match="d=1: one direction has no orthogonal partner"):
        orf_pair_covariance(z, 1)
