"""rffbench/_numba/gram.py: the compiled Grams, per profile and coordinate code, against
numpy."""

import numpy as np
import pytest

from rffbench import _numba as nbk

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


@pytest.mark.parametrize("profile", sorted(set(PROFILE_REF) - {nbk.PROFILE_NONE}))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scaled_sqdist_rows_and_row(rng, profile, dtype):
    """The augmented rows' GEMM is -c |x - y|^2 (c = profile_scale) and the scaled row's
    profile of it is the numpy profile of the distances (float32 rows: float32 accuracy),
    its source row cleared; padded zero rows are harmless (finite values)."""
    from rffbench._numba import gram

    X = rng.normal(size=(40, 5)).astype(dtype)
    Y = rng.normal(size=(33, 5)).astype(dtype)
    X64, Y64 = X.astype(np.float64), Y.astype(np.float64)
    sq = ((X64[:, None, :] - Y64[None, :, :]) ** 2).sum(-1)
    L, _ = nbk.sqdist_gemm_rows(X, profile, 0.7)
    _, R = nbk.sqdist_gemm_rows(Y, profile, 0.7)
    assert L.dtype == R.dtype == dtype and L.shape == (40, 7) and R.shape == (33, 7)
    c = gram.profile_scale(profile, 0.7)
    G = L @ R.T
    eps = np.finfo(dtype).eps
    norms = (X64**2).sum(1)[:, None] + (Y64**2).sum(1)[None, :]
    assert np.max(np.abs(G + c * sq) / (c * norms)) <= 20 * eps
    K = np.full(G.shape, np.nan)
    for r in range(G.shape[0]):
        gram.scaled_sqdist_row(G[r], K[r], profile)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    assert np.allclose(K, PROFILE_REF[profile](sq, 0.7), rtol=tol, atol=tol)
    assert not G.any()  # cleared for the next accumulating GEMM
    pad = np.zeros((1, 7), dtype)
    pad[0, 6] = -c
    P = pad @ R.T
    gram.scaled_sqdist_row(P[0], K[0], profile)
    assert np.all(np.isfinite(K[0]))


def test_coordinate_gram_kernels(rng):
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(20, 4))
    diff = X[:, None, :] - Y[None, :, :]
    out = np.empty((30, 20))
    for shift in (0.0, 100.0):  # L1 = sum x + sum y - 2 sum min: cancellation ~eps sum |x|
        Xs, Ys = X + shift, Y + shift
        nbk.coordinate_gram(Xs, np.ascontiguousarray(Ys.T), out, nbk.L1DIST, nbk.PROFILE_NONE,
                            0.0)
        bound = 8 * np.finfo(float).eps * (np.abs(Xs).sum(1)[:, None] + np.abs(Ys).sum(1))
        assert np.all(np.abs(out - np.abs(diff).sum(-1)) <= bound)
    nbk.coordinate_gram(X, np.ascontiguousarray(X.T), out[:, :0], nbk.L1DIST,
                        nbk.PROFILE_NONE, 0.0)  # no columns: nothing to do
    D = np.empty((30, 30))
    nbk.coordinate_gram(X, np.ascontiguousarray(X.T), D, nbk.L1DIST, nbk.PROFILE_NONE, 0.0)
    assert np.array_equal(D, D.T) and np.all(D >= 0)
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


def test_exp_dot_rows_with_and_without_the_norm_bound(rng):
    """The exponential dot product's values: rows whose bound |x| |y| / l^2 is at most
    708 take the exp without selects, the others the one that overflows to inf; both
    against numpy's exp of the dot products (arguments up to +-700: relative 1e-12 is
    the argument's rounding), in the Gram, the tiles and the tile products."""
    from rffbench.exact.tiles import TiledRows, tiled_gram, tiled_times
    from rffbench.kernels import make_kernel

    X = 0.3 * rng.standard_normal((300, 3))
    Y = 0.3 * rng.standard_normal((290, 3))
    X[:4] = [[27.0, 0, 0], [-27.0, 0, 0], [0, 26.0, 0], [0.1, 0.1, 27.3]]
    Y[:3] = [[25.9, 0.1, 0], [0, 27.0, 0], [0, 0, -25.8]]  # |x| |y| up to 737, |x.y| <= 705
    k = make_kernel("exp_dot", lengthscale=1.0).fit(None)
    spec = k.tile_spec()
    ref = np.exp(X @ Y.T)
    assert ref.max() > 1e300 and ref.min() < 1e-300

    def gram(A, B):  # the compiled Gram itself: the API refuses these values (check_values)
        out = np.empty((A.shape[0], B.shape[0]))
        k._gram_into(A, B, out)
        return out

    from rffbench.errors import DataError

    with pytest.raises(DataError, match="kernel=exp_dot"):
        k.gram(X, Y)
    np.testing.assert_allclose(gram(X, Y), ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(tiled_gram(spec, TiledRows(spec, X), TiledRows(spec, Y)), ref,
                               rtol=1e-12, atol=0)
    V = rng.standard_normal((290, 2)) * 1e-300
    got = tiled_times(spec, TiledRows(spec, X), TiledRows(spec, Y), V)
    assert np.all(np.abs(got - ref @ V) <= 1e-12 * (np.abs(ref) @ np.abs(V)))
    # beyond the bounded exp's range: inf above exp's overflow, 0 below 3e-308
    Z = np.vstack([[[0, 0, 28.0], [0, 27.0, 0]], X[4:]])
    with np.errstate(over="ignore"):
        ref = np.exp(Z @ Y.T)
    tiny = np.finfo(np.float64).tiny
    for G in (gram(Z, Y), tiled_gram(spec, TiledRows(spec, Z), TiledRows(spec, Y))):
        assert np.array_equal(np.isinf(G), np.isinf(ref)) and np.isinf(ref).sum() == 1
        assert np.all(G[ref < tiny] == 0.0) and (ref < tiny).sum() == 1
        normal = np.isfinite(ref) & (ref >= tiny)
        np.testing.assert_allclose(G[normal], ref[normal], rtol=1e-12, atol=0)
