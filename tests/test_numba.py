"""Every compiled function against a plain-numpy reference."""
import numpy as np
import pytest

from rffbench import _numba as nbk

TRIG_RANGE = 1.0e4  # |w.x + b| seen in practice; the contract is |x| <= 1e4 (and beyond)


def _grid(lo, hi, n=2_000_001):
    x = np.linspace(lo, hi, n)
    return np.concatenate([x, np.random.default_rng(0).uniform(lo, hi, n)])


@pytest.mark.parametrize("fn,ref", [(nbk.fast_cos, np.cos), (nbk.fast_sin, np.sin)])
def test_fast_trig_float64_accuracy(fn, ref):
    x = _grid(-TRIG_RANGE, TRIG_RANGE)
    # near multiples of pi/2, where cancellation in the reduction would show
    k = np.arange(-6000, 6001)
    x = np.concatenate([x, k * np.pi / 2, np.nextafter(k * np.pi / 2, np.inf), [0.0, -0.0]])
    out = np.empty_like(x)
    fn(x, out)
    assert np.max(np.abs(out - ref(x))) <= 1e-14


@pytest.mark.parametrize("fn,ref", [(nbk.fast_cos, np.cos), (nbk.fast_sin, np.sin)])
def test_fast_trig_large_arguments(fn, ref):
    x = np.random.default_rng(1).uniform(-nbk.FAST_TRIG_MAX, nbk.FAST_TRIG_MAX, 200_000)
    out = np.empty_like(x)
    fn(x, out)
    # the reduction keeps ~1e-16 relative accuracy in k*pi: error grows like |x| * 1e-22
    assert np.max(np.abs(out - ref(x))) <= 1e-12


@pytest.mark.parametrize("fn,ref", [(nbk.fast_cos, np.cos), (nbk.fast_sin, np.sin)])
def test_fast_trig_float32_accuracy(fn, ref):
    x = _grid(-TRIG_RANGE, TRIG_RANGE, 500_001).astype(np.float32)
    out = np.empty_like(x)
    fn(x, out)
    assert out.dtype == np.float32
    assert np.max(np.abs(out.astype(np.float64) - ref(x.astype(np.float64)))) <= 1e-6


def test_fast_exp_accuracy():
    x = _grid(-700.0, 0.0)
    out = np.empty_like(x)
    nbk.fast_exp(x, out)
    ref = np.exp(x)
    assert np.max(np.abs(out - ref) / ref) <= 4e-16
    tiny = np.array([-708.5, -745.0, -1e4, -np.inf])
    out = np.empty_like(tiny)
    nbk.fast_exp(tiny, out)
    assert np.all(out <= 1e-307) and np.all(out >= 0)


def _rows(rng, n, m, scale=30.0):
    return rng.normal(scale=scale, size=(n, m))


def test_cos_offset_scale_inplace_matches_numpy(rng, dtype):
    A = _rows(rng, 257, 131).astype(dtype)
    b = rng.uniform(0, 2 * np.pi, 131)
    bound = np.abs(A).max(axis=1).astype(np.float64) + 2 * np.pi
    bound[::7] = 2 * nbk.FAST_TRIG_MAX  # these rows take the libm path
    Z = A.copy()
    nbk.cos_offset_scale_inplace(Z, b, 0.3, bound)
    ref = 0.3 * np.cos(A.astype(np.float64) + b)
    tol = 1e-14 if dtype == np.float64 else 1e-7
    assert Z.dtype == dtype
    assert np.max(np.abs(Z - ref)) <= tol


def test_sincos_pairs_inplace_matches_numpy(rng, dtype):
    m = 64
    A = _rows(rng, 123, m).astype(dtype)
    Z = np.empty((123, 2 * m), dtype=dtype)
    Z[:, :m] = A
    bound = np.abs(A).max(axis=1).astype(np.float64)
    bound[::5] = 2 * nbk.FAST_TRIG_MAX
    nbk.sincos_pairs_inplace(Z, m, 0.5, bound)
    A64 = A.astype(np.float64)
    ref = 0.5 * np.hstack([np.cos(A64), np.sin(A64)])
    tol = 1e-14 if dtype == np.float64 else 1e-7
    assert np.max(np.abs(Z - ref)) <= tol


def test_scale_inplace(rng):
    A = rng.normal(size=(10, 7))
    Z = A.copy()
    nbk.scale_inplace(Z, 2.5)
    assert np.array_equal(Z, 2.5 * A)


PROFILE_REF = {
    nbk.PROFILE_NONE: lambda s, a: s,
    nbk.PROFILE_EXP: lambda s, a: np.exp(-a * s),
    nbk.PROFILE_EXP_SQRT: lambda s, a: np.exp(-a * np.sqrt(s)),
    nbk.PROFILE_MATERN15: lambda s, a: (1 + a * np.sqrt(s)) * np.exp(-a * np.sqrt(s)),
    nbk.PROFILE_MATERN25: lambda s, a: (1 + a * np.sqrt(s) + (a * np.sqrt(s)) ** 2 / 3)
    * np.exp(-a * np.sqrt(s)),
}


@pytest.mark.parametrize("profile", sorted(PROFILE_REF))
def test_sqdist_kernels_and_profiles(rng, profile):
    X, Y = rng.normal(size=(40, 5)), rng.normal(size=(33, 5))
    sq = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    ref = PROFILE_REF[profile](sq, 0.7)
    out = np.empty((40, 33))
    nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, nbk.SQDIST, profile, 0.7)
    assert np.allclose(out, ref, rtol=1e-13, atol=1e-14)
    G = X @ Y.T
    nbk.sqdist_from_gemm_profile(G, (X**2).sum(1), (Y**2).sum(1), profile, 0.7)
    assert np.allclose(G, ref, rtol=1e-12, atol=1e-12)


def test_coordinate_gram_kernels(rng):
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(20, 4))
    diff = X[:, None, :] - Y[None, :, :]
    out = np.empty((30, 20))
    nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, nbk.L1DIST, nbk.PROFILE_NONE, 0.0)
    assert np.allclose(out, np.abs(diff).sum(-1), rtol=1e-14)
    nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, nbk.CAUCHY, nbk.PROFILE_NONE, 0.25)
    assert np.allclose(out, np.prod(1 / (1 + 0.25 * diff**2), -1), rtol=1e-13)
    nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, nbk.SECH, nbk.PROFILE_NONE, 0.6)
    assert np.allclose(out, np.prod(1 / np.cosh(0.6 * diff), -1), rtol=1e-13)
    P, Q = np.abs(X), np.abs(Y)
    P[0, 0] = Q[0, 0] = 0.0  # a term with x_k + y_k = 0 counts 0
    s = P[:, None, :] + Q[None, :, :]
    terms = np.divide(2 * P[:, None, :] * Q[None, :, :], s, out=np.zeros_like(s), where=s > 0)
    nbk.coordinate_gram(P, np.ascontiguousarray(Q.T), out, nbk.ADDITIVE_CHI2, nbk.PROFILE_NONE,
                        0.5)
    assert np.allclose(out, 0.5 * terms.sum(-1), rtol=1e-13)


def test_abs_max_sum_sq(rng):
    E = rng.normal(size=(50, 60))
    mx, sa, s2 = nbk.abs_max_sum_sq(E)
    assert mx == np.abs(E).max()
    assert np.isclose(sa, np.abs(E).sum(), rtol=1e-13)
    assert np.isclose(s2, (E**2).sum(), rtol=1e-13)
