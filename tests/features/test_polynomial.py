"""rffbench.features.polynomial: Random Maclaurin (H0/1 included) and TensorSketch against
their definitions, formulas and scikit-learn."""
import itertools
import math

import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS
from rffbench.kernels import Polynomial, make_kernel
from rffbench.theory import estimate_mse
from tests.helpers import pair_estimates, variance_se


@pytest.mark.parametrize("kname,kparams", [("polynomial", {"degree": 3}), ("exp_dot", {})])
@pytest.mark.parametrize("h01", [False, True])
def test_maclaurin_variance_formula_by_enumeration(kname, kparams, h01, rng):
    """exact_mse against the variance computed from the map's own law: the degrees' law q and
    the weights read from a fitted map (D = 40,000: the degree frequencies within 5 standard
    errors of q), and E[(r.x)^2 (r.y)^2] by enumerating the 2^d sign vectors r."""
    d = 4
    x, y = rng.normal(size=d) / 2, rng.normal(size=d) / 2
    k = make_kernel(kname, lengthscale=1.1, **kparams).fit(None)
    D = 40_000
    f = FEATURE_MAPS["maclaurin"](kernel=k, n_components=D, h01=h01, random_state=3)
    f.fit(np.vstack([x, y]))
    D_r = D - (d + 1 if h01 else 0)
    a = f.coefficients_
    N = np.arange(a.size)
    q = 0.5 ** (N + 1.0) * (N >= (2 if h01 else 0))  # Kar & Karnick's measure, by hand
    q /= q.sum()
    freq = np.bincount(f.degrees_, minlength=a.size) / D_r
    assert np.all(np.abs(freq - q) <= 5 * np.sqrt(q * (1 - q) / D_r) + 1.0 / D_r)
    np.testing.assert_allclose(f.weights_, np.sqrt(a[f.degrees_] / (q[f.degrees_] * D_r)),
                               rtol=1e-13)
    w2 = np.where(q > 0, a / np.where(q > 0, q, 1), 0.0)
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    m2 = np.mean((signs @ x) ** 2 * (signs @ y) ** 2)
    used = q > 0
    k_r = np.sum(a[used] * (x @ y) ** N[used])
    direct = (np.sum(q[used] * w2[used] ** 2 * m2 ** N[used]) - k_r**2) / D_r
    assert estimate_mse("maclaurin", k, x, y, D, h01=h01) == pytest.approx(direct, rel=1e-10)


def test_h01_features_hold_the_exact_low_degrees(rng):
    X = rng.normal(size=(4, 3))
    k = make_kernel("polynomial", degree=1, lengthscale=1.0)  # 1 + x.y: H0/1 is exact
    f = FEATURE_MAPS["maclaurin"](kernel=k, n_components=6, h01=True, random_state=0).fit(X)
    np.testing.assert_allclose(f.kernel_estimate(X), 1.0 + X @ X.T, rtol=1e-13)


# ---- fast transforms against explicit computations ----------------------------------
@pytest.mark.parametrize("block_bytes", [None, 2 * 8 * 2 * 16], ids=["one-block", "rows-2-2-1"])
def test_tensorsketch_is_the_count_sketch_of_the_tensor_square(rng, monkeypatch, block_bytes):
    """Degree 2: TS(x) = count sketch of x' (x) x' with hash (h1(i) + h2(j)) mod D and sign
    s1(i) s2(j), computed explicitly; in one block of rows and in blocks of 2 rows (the
    last one shorter)."""
    from rffbench.features import polynomial

    if block_bytes:
        monkeypatch.setattr(polynomial, "SKETCH_BLOCK_BYTES", block_bytes)
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
