"""Every CUDA kernel of rffbench.cuda against a plain-numpy reference, over shapes from 1
(d = 1, N = 1, odd m), float64 and float32, C, Fortran and strided host inputs and device
inputs.  Shapes stay small: on the simulator each CUDA thread is a Python thread."""
import numpy as np
import pytest
from scipy.linalg import hadamard

from rffbench.cuda import gemm
from rffbench.cuda import kernels as ck

SHAPES = [(1, 1), (2, 3), (5, 17)]
DTYPES = [np.float64, np.float32]


def _tol(dtype):
    return dict(rtol=2e-6, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)


def _layouts(A):
    """The same values C-ordered, Fortran-ordered, as a strided view, and on the device."""
    from numba import cuda

    wide = np.zeros((A.shape[0], 2 * A.shape[1]), dtype=A.dtype)
    wide[:, ::2] = A
    return {"C": np.ascontiguousarray(A), "F": np.asfortranarray(A), "strided": wide[:, ::2],
            "device": cuda.to_device(np.ascontiguousarray(A))}


def _host(a):
    return a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)


@pytest.mark.parametrize("n,m", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "strided", "device"])
def test_cos_offset_scale(n, m, dtype, layout, rng):
    Z = rng.normal(size=(n, m)).astype(dtype) * 3
    b = rng.uniform(0, 2 * np.pi, m).astype(dtype)
    got = _host(ck.cos_offset_scale(_layouts(Z)[layout], b, 0.7))
    assert got.dtype == dtype and got.shape == (n, m)
    np.testing.assert_allclose(got, (0.7 * np.cos(Z.astype(np.float64) + b)), **_tol(dtype))


@pytest.mark.parametrize("n,m", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "device"])
def test_sincos_pairs(n, m, dtype, layout, rng):
    P = (rng.normal(size=(n, m)) * 4).astype(dtype)
    got = _host(ck.sincos_pairs(_layouts(P)[layout], 0.5))
    P64 = P.astype(np.float64)
    want = np.hstack([0.5 * np.cos(P64), 0.5 * np.sin(P64)])
    assert got.shape == (n, 2 * m) and got.dtype == dtype
    np.testing.assert_allclose(got, want, **_tol(dtype))


@pytest.mark.parametrize("code", [ck.ACT_STEP, ck.ACT_RELU, ck.ACT_IDENTITY])
@pytest.mark.parametrize("n,m", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_activation(code, n, m, dtype, rng):
    Z = rng.normal(size=(n, m)).astype(dtype)
    Z[0, 0] = 0.0  # step(0) = 1/2
    zero_below = np.full(n, 0.3)
    for zb in (None, zero_below):
        got = _host(ck.activation(Z.copy(), code, 1.5, zb))
        lim = zb[:, None] if zb is not None else 0.0
        if code == ck.ACT_STEP:
            want = np.where(np.abs(Z) <= lim, 0.75, np.where(Z > 0, 1.5, 0.0))
        elif code == ck.ACT_RELU:
            want = 1.5 * np.maximum(Z.astype(np.float64), 0)
        else:
            want = 1.5 * Z.astype(np.float64)
        np.testing.assert_allclose(got, want, **_tol(dtype))


@pytest.mark.parametrize("n,m", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_positive(n, m, dtype, rng):
    Z = rng.normal(size=(n, m)).astype(dtype)
    shift = Z.max(axis=1)
    got = _host(ck.positive(Z.copy(), shift, 0.25))
    np.testing.assert_allclose(got, 0.25 * np.exp(Z.astype(np.float64) - shift[:, None]),
                               **_tol(dtype))


def _fwht_blocks(X, L, B, per_block):
    """Plain numpy: per block b, per_block(b, padded x) -> length-L vector; concatenated."""
    Xp = np.zeros((X.shape[0], L))
    Xp[:, :X.shape[1]] = X
    return np.hstack([np.stack([per_block(b, x) for x in Xp]) for b in range(B)])


@pytest.mark.parametrize("n,d,m", [(1, 1, 1), (2, 3, 5), (3, 5, 13)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sorf_project(n, d, m, dtype, rng):
    L = 1 << max(0, (d - 1).bit_length())
    B = -(-m // L)
    X = rng.normal(size=(n, d)).astype(dtype)
    S = rng.choice([-1.0, 1.0], size=(3, B, L))
    H = hadamard(L).astype(np.float64)
    want = 0.3 * _fwht_blocks(X.astype(np.float64), L, B,
                              lambda b, x: H @ (S[0, b] * (H @ (S[1, b] * (H @ (S[2, b] * x))))))
    got = _host(ck.sorf_project(X, S[0], S[1], S[2], 0.3, m))
    assert got.shape == (n, m) and got.dtype == dtype
    np.testing.assert_allclose(got, want[:, :m], **_tol(dtype))


@pytest.mark.parametrize("n,d,m", [(1, 1, 1), (2, 3, 7), (3, 6, 16)])
def test_fastfood_project(n, d, m, rng):
    L = 1 << max(0, (d - 1).bit_length())
    B = -(-m // L)
    X = rng.normal(size=(n, d))
    sign = rng.choice([-1.0, 1.0], size=(B, L))
    perm = np.argsort(rng.random((B, L)), axis=1)
    G, S = rng.normal(size=(B, L)), rng.uniform(0.5, 2, size=(B, L))
    H = hadamard(L).astype(np.float64)
    want = 0.2 * _fwht_blocks(X, L, B, lambda b, x: S[b] * (H @ (G[b] * (H @ (sign[b] * x))[
        perm[b]])))
    got = ck.fastfood_project(X, sign, perm, G, S, 0.2, m)
    np.testing.assert_allclose(got, want[:, :m], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("profile", [ck.SQ_EXP, ck.EXP_L2, ck.EXP_L1])
@pytest.mark.parametrize("n,m,d,c", [(1, 1, 1, 1), (3, 4, 2, 2), (9, 7, 5, 1),
                                     (2, 35, 33, 1)])  # past one 32 x 32 tile both ways
@pytest.mark.parametrize("dtype", DTYPES)
def test_kernel_matvec(profile, n, m, d, c, dtype, rng):
    X, Y = rng.normal(size=(n, d)).astype(dtype), rng.normal(size=(m, d)).astype(dtype)
    V = rng.normal(size=(m, c))
    diff = X.astype(np.float64)[:, None] - Y.astype(np.float64)[None]
    s = {ck.SQ_EXP: (diff ** 2).sum(-1), ck.EXP_L2: np.sqrt((diff ** 2).sum(-1)),
         ck.EXP_L1: np.abs(diff).sum(-1)}[profile]
    got = ck.kernel_matvec(X, Y, V, profile, 0.4)
    np.testing.assert_allclose(got, np.exp(-0.4 * s) @ V, rtol=1e-12, atol=1e-13)
    got1 = ck.kernel_matvec(X, Y, V[:, 0], profile, 0.4)  # a vector: one column
    np.testing.assert_allclose(got1[:, 0], np.exp(-0.4 * s) @ V[:, 0], rtol=1e-12, atol=1e-13)


def test_a_padded_dimension_past_the_shared_transform_is_refused():
    S = np.ones((1, 2048))
    with pytest.raises(ValueError, match="power of two up to 1024, not L = 2048"):
        ck.sorf_project(np.ones((1, 3)), S, S, S, 1.0, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_then_cosine_is_the_rff_transform(dtype, rng):
    """The GEMM function and the cosine pass together: rffbench's rff map's own output
    for its W and b (drawn on the host, so the device changes only rounding)."""
    from rffbench.features import FEATURE_MAPS

    X = rng.normal(size=(4, 3)).astype(dtype)
    fmap = FEATURE_MAPS["rff"](kernel="gaussian", n_components=9, random_state=0).fit(X)
    P = gemm.project(X, fmap.random_weights_)
    got = _host(ck.cos_offset_scale(P, fmap.random_offset_, np.sqrt(2.0 / 9)))
    np.testing.assert_allclose(got, fmap.transform(X), **_tol(dtype))
