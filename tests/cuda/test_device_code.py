"""Every CUDA kernel of rffbench.cuda against a plain-numpy reference, over shapes from 1
(d = 1, N = 1, odd m), float64 and float32, C, Fortran and strided host inputs and device
inputs; then the kernel product as device=cuda uses it (rffbench.exact's device operator,
Gram, predictions and exact KRR by cg against the CPU's).  Shapes stay small: on the
simulator each CUDA thread is a Python thread."""
import numpy as np
import pytest
from scipy.linalg import hadamard

from rffbench.cuda import device_code as ck
from rffbench.cuda import gemm
from rffbench.exact import (
    DeviceKernelOperator,
    ExactKRR,
    KernelOperator,
    device_gram,
    kernel_times,
    select_lambda,
)
from rffbench.kernels import make_kernel

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


@pytest.mark.parametrize("profile", [ck.SQ_EXP, ck.EXP_L2, ck.EXP_L1])
@pytest.mark.parametrize("n,m,d", [(1, 1, 1), (3, 4, 2), (17, 5, 3)])  # past one 16 x 16 block
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "device"])
def test_kernel_gram(profile, n, m, d, dtype, layout, rng):
    X, Y = rng.normal(size=(n, d)).astype(dtype), rng.normal(size=(m, d)).astype(dtype)
    diff = X.astype(np.float64)[:, None] - Y.astype(np.float64)[None]
    s = {ck.SQ_EXP: (diff ** 2).sum(-1), ck.EXP_L2: np.sqrt((diff ** 2).sum(-1)),
         ck.EXP_L1: np.abs(diff).sum(-1)}[profile]
    got = _host(ck.kernel_gram(_layouts(X)[layout], Y, profile, 0.7))
    assert got.shape == (n, m) and got.dtype == np.float64
    np.testing.assert_allclose(got, np.exp(-0.7 * s), rtol=1e-12, atol=1e-14)


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


# --------------------------------------------------------------------------
# the kernel product through rffbench.exact (device=cuda): the GPU's kernel operator,
# Gram and exact KRR against the CPU's
# --------------------------------------------------------------------------
KERNELS = [("gaussian", {}), ("laplacian", {}), ("matern", dict(nu=0.5))]


@pytest.mark.parametrize("kernel,params", KERNELS)
@pytest.mark.parametrize("n,d", [(1, 1), (9, 3), (40, 2)])
def test_the_device_operator_is_the_cpu_operator(kernel, params, n, d, rng):
    k = make_kernel(kernel, lengthscale=0.9, **params).fit(None)
    X = rng.normal(size=(n, d))
    V = rng.normal(size=(n, 2))
    cpu, gpu = KernelOperator(k, X), DeviceKernelOperator(k, X)
    np.testing.assert_allclose(gpu.matvec(V), cpu.matvec(V), rtol=1e-11, atol=1e-12)
    idx = np.arange(0, n, 2)
    np.testing.assert_allclose(gpu.columns(idx), cpu.columns(idx), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gpu.diagonal(), cpu.diagonal(), rtol=1e-15)
    assert gpu.products == 1 and gpu.route == "cuda tiles" and gpu.precision_used == "float64"
    Y = rng.normal(size=(5, d))
    np.testing.assert_allclose(device_gram(k, Y, X, "cuda"), k.gram(Y, X), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(kernel_times(k, Y, X, V, "cuda"), k.gram(Y, X) @ V,
                               rtol=1e-11, atol=1e-12)


def test_a_kernel_without_a_gpu_product_is_one_line():
    from rffbench.errors import ConfigError

    k = make_kernel("cauchy", lengthscale=1.0).fit(None)
    with pytest.raises(ConfigError, match="kernel=cauchy has no exact product on the GPU "
                                          r"\(device=cuda\): kernels with one: gaussian"):
        DeviceKernelOperator(k, np.ones((2, 1)))
    np.testing.assert_allclose(device_gram(k, np.ones((2, 1)), np.zeros((1, 1)), "cuda"),
                               k.gram(np.ones((2, 1)), np.zeros((1, 1))))  # the CPU's


def test_exact_krr_by_cg_on_the_device_is_the_cpus(rng):
    X = rng.normal(size=(30, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=30)
    kw = dict(kernel="gaussian", lengthscale=1.0, lam=1e-2, solver="cg", tol=1e-12,
              random_state=0)
    cpu = ExactKRR(**kw).fit(X, y)
    gpu = ExactKRR(device="cuda", **kw).fit(X, y)
    assert gpu.solver_info_["route"] == "cuda tiles" and gpu.solver_info_["converged"]
    np.testing.assert_allclose(gpu.dual_coef_, cpu.dual_coef_, rtol=1e-8, atol=1e-9)
    Xt = rng.normal(size=(6, 2))
    np.testing.assert_allclose(gpu.predict(Xt), cpu.predict(Xt), rtol=1e-9, atol=1e-10)
    auto = ExactKRR(device="cuda", **dict(kw, solver="auto")).fit(X, y)
    assert auto.solver_info_["solver"] == "cg"  # on the GPU auto is cg


def test_the_lambda_grid_on_the_device_is_the_cpus(rng):
    """select_lambda by cg: one operator and preconditioner on the device, a solve per
    lambda, the validation scores through the device's K(X_val, X_fit) A."""
    k = make_kernel("gaussian", lengthscale=1.2).fit(None)
    X, Xv = rng.normal(size=(20, 2)), rng.normal(size=(6, 2))
    Y = np.cos(X[:, :1])
    kw = dict(solver="cg", tol=1e-12, random_state=0)
    cpu = select_lambda(k, X, Y, Xv, [1e-3, 1e-1], **kw)
    gpu = select_lambda(k, X, Y, Xv, [1e-3, 1e-1], device="cuda", **kw)
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9)
