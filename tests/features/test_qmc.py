"""rffbench.features.qmc: quasi-Monte Carlo frequencies (sequences, unbiasedness, error)."""
import math

import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS
from rffbench.features.qmc import generalized_halton
from rffbench.kernels import make_kernel
from tests.helpers import pair_estimates, pairs_at

GAUSS = make_kernel("gaussian", lengthscale=1.0)






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


@pytest.mark.parametrize("kname,params", [("laplacian", {}), ("cauchy", {}),
                                          ("matern", {"nu": 1.5})])
@pytest.mark.slow
def test_qmc_unbiased_for_other_kernels(kname, params):
    kernel = make_kernel(kname, lengthscale=1.0, **params)
    X, Y = pairs_at(2, [0.3, 1.5])
    est = pair_estimates("qmc", kernel, X, Y, 32, seeds=1500)
    k = kernel.k_of_delta(X - Y)
    se = est.std(0, ddof=1) / math.sqrt(1500)
    assert np.all(np.abs(est.mean(0) - k) <= 5 * se + 1e-12), (est.mean(0), k, se)


def test_qmc_error_below_iid_rff():
    rng = np.random.default_rng(3)
    M = rng.uniform(-1, 1, size=(200, 2))
    K = GAUSS.gram(M)
    err = {}
    for name in ("qmc", "rff_pairs"):
        e = []
        for s in range(20):
            Z = FEATURE_MAPS[name](kernel=GAUSS, n_components=256, random_state=s).fit(M) \
                .transform(M)
            e.append(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K))
        err[name] = np.mean(e)
    assert err["qmc"] < 0.7 * err["rff_pairs"], err
