"""rffbench/_numba/passes.py: the maps' passes over their outputs against numpy."""

import numpy as np
import pytest

from rffbench import _numba as nbk


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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(1, 1), (7, 1), (1, 9), (33, 17)])
def test_fill_inplace_matches_numpy_full(shape, dtype):
    Z = np.empty(shape, dtype=dtype)
    nbk.fill_inplace(Z, 0.3)
    assert Z.dtype == dtype and np.array_equal(Z, np.full(shape, 0.3, dtype=dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,reps", [((1, 1), 1), ((3, 5), 2), ((4, 33), 3)])
def test_repeated_cos_and_exp_passes_match_numpy(shape, reps, dtype, rng):
    """The limit's in-cache rates (rffbench.measure.limits): ``reps`` passes of the maps'
    cosine, of the Grams' exp, as numpy computes them."""
    Z = rng.uniform(-1, 1, shape).astype(dtype)
    off = rng.uniform(0, 1, shape[1]).astype(dtype)
    want = Z.astype(np.float64)
    for _ in range(reps):
        want = np.cos(want + off)
    nbk.cos_rows_repeat(Z, off, np.full(shape[0], 3.0), reps)
    tol = 1e-13 if dtype == np.float64 else 3e-6
    assert Z.dtype == dtype and np.max(np.abs(Z - want)) <= tol
    E = -rng.uniform(0, 5, shape).astype(dtype)
    want = E.astype(np.float64)
    for _ in range(reps):
        want = -np.exp(want)
    nbk.exp_rows_repeat(E, reps)
    assert E.dtype == dtype and np.max(np.abs(E - want)) <= tol


def test_scale_inplace(rng):
    A = rng.normal(size=(10, 7))
    Z = A.copy()
    nbk.scale_inplace(Z, 2.5)
    assert np.array_equal(Z, 2.5 * A)


# ---- numba passes against numpy ---------------------------------------------------
def test_numba_passes_match_numpy(rng):
    Z = rng.normal(size=(50, 33))
    Z[::7, ::5] = 0.0  # the step's midpoint at exactly 0
    tol = np.abs(Z).max(axis=1) * 0.05  # and within a per-row tolerance of 0
    Zt = np.where(np.abs(Z) <= tol[:, None], 0.0, Z)
    for code, ref, zero in ((nbk.ACT_STEP, np.heaviside(Z, 0.5) * 0.3, np.empty(0)),
                            (nbk.ACT_STEP, np.heaviside(Zt, 0.5) * 0.3, tol),
                            (nbk.ACT_RELU, np.maximum(Z, 0) * 0.3, np.empty(0)),
                            (nbk.ACT_IDENTITY, Z * 0.3, np.empty(0))):
        A = Z.copy()
        nbk.activation_inplace(A, code, 0.3, zero)
        np.testing.assert_array_equal(A, ref)
    shift = rng.random(50)
    A = Z.copy()
    nbk.positive_features_inplace(A, shift, 0.2)
    np.testing.assert_allclose(A, 0.2 * np.exp(Z - shift[:, None]), rtol=1e-15)
    P = rng.normal(size=(7, 12))
    count = np.array([0, 3, 1, 2, 0])
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    w = rng.random(5)
    out = np.empty((7, 5))
    nbk.group_products(P, start, count, w, out)
    ref = np.column_stack([w[f] * np.prod(P[:, start[f]:start[f] + count[f]], axis=1)
                           for f in range(5)])
    np.testing.assert_allclose(out, ref, rtol=1e-14)
    X = rng.normal(size=(6, 4))
    h, s = rng.integers(0, 8, size=(2, 4)), rng.choice([-1.0, 1.0], size=(2, 4))
    C = np.empty((2, 6, 8))
    nbk.count_sketches(X, h, s, C)
    for t in range(2):
        M = np.zeros((4, 8))
        M[np.arange(4), h[t]] = s[t]
        np.testing.assert_allclose(C[t], X @ M, atol=1e-14)
