"""Every compiled function against a plain-numpy reference."""
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from rffbench import _numba as nbk

TRIG_RANGE = 1.0e4  # |w.x + b| seen in practice; the contract is |x| <= 1e4 (and beyond)


def _grid(lo, hi, n=2_000_001):
    x = np.linspace(lo, hi, n)
    return np.concatenate([x, np.random.default_rng(0).uniform(lo, hi, n)])


def _rows(rng, n, m, scale=30.0):
    return rng.normal(scale=scale, size=(n, m))


PROFILE_REF = {
    nbk.PROFILE_NONE: lambda s, a: s,
    nbk.PROFILE_EXP: lambda s, a: np.exp(-a * s),
    nbk.PROFILE_EXP_SQRT: lambda s, a: np.exp(-a * np.sqrt(s)),
    nbk.PROFILE_MATERN15: lambda s, a: (1 + a * np.sqrt(s)) * np.exp(-a * np.sqrt(s)),
    nbk.PROFILE_MATERN25: lambda s, a: (1 + a * np.sqrt(s) + (a * np.sqrt(s)) ** 2 / 3)
    * np.exp(-a * np.sqrt(s)),
}


# --------------------------------------------------------------------------
# the fused kernel products, against K @ V from the numpy Gram of the kernel
def _kernel_cases():
    from rffbench.kernels import make_kernel

    for name, params in [("gaussian", {}), ("laplacian", {}), ("cauchy", {}),
                         ("matern", {"nu": 0.5}), ("matern", {"nu": 1.5}),
                         ("matern", {"nu": 2.5}), ("arccos0", {}), ("arccos1", {}),
                         ("polynomial", {"degree": 3}), ("additive_chi2", {}),
                         ("skewed_chi2", {}), ("intersection", {})]:
        yield pytest.param(lambda name=name, params=params: make_kernel(name, **params),
                           id=name + "".join(f"-{v}" for v in params.values()))


def _numpy_gram(kernel, X, Y):
    """k(X, Y) as a matrix: the kernel's Gram (tested against scipy references in
    tests/test_kernels.py), for numpy's K @ V."""
    return np.asarray(kernel.gram(X, Y), dtype=np.float64)


def make_kernel_for_test(name, params):
    from rffbench.kernels import make_kernel

    return make_kernel(name, **params)


COMPILE_WATCH = """
import json, sys
from numba.core import event

seen = []


class Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        d = ev.data.get("dispatcher")
        f = getattr(d, "py_func", None)
        if f is not None and f.__module__.startswith("rffbench."):
            seen.append([f.__module__ + "." + f.__qualname__, str(ev.data.get("args"))])


event.register("numba:compile", Listener())
out, sys.argv = sys.argv[1], ["run.py", *sys.argv[2:]]
from rffbench.cli import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
json.dump(seen, open(out, "w"))
"""


def _has_avx512():
    import llvmlite.binding as ll

    return "+avx512f" in ll.get_host_cpu_features().flatten().split(",")


#: LLVM CPU names whose own tuning already vectorises with 512-bit registers
PREFER_512_CPUS = ("znver4", "znver5")


HOT_PATHS = """
import json, sys
import numpy as np
from rffbench._numba import gram, passes, products
from rffbench.exact import KernelOperator
from rffbench.features import RandomFourierFeatures
from rffbench.kernels import make_kernel

X = np.random.default_rng(0).standard_normal((600, 4))
for name in ("gaussian", "arccos1"):  # a squared-distance tile and a dot-product tile (the
    # attribute is _times_chunk's whatever the tile; laplacian's coordinate tile: +30 s)
    KernelOperator(make_kernel(name).fit(X), X).matvec(np.ones((600, 1)))
RandomFourierFeatures(kernel="gaussian", n_components=64, random_state=0).fit_transform(X)
attr = '"prefer-vector-width"="512"'
seen = {}
for f in (products._times_chunk, products.fold_row, gram.scaled_sqdist_row, passes._cos_block):
    ir = f.inspect_llvm()
    seen[f.__name__] = [len(ir), all(attr in v for v in ir.values()),
                        min(v.count("zmm") for v in f.inspect_asm().values())]
json.dump(seen, open(sys.argv[1], "w"))
"""


CACHE_PROBE = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import _numba as nbk
X = np.linspace(-1.0, 1.0, 6)[:, None]
W = np.full((1, 3), 0.7)
out = np.empty((6, 3))
nbk.gemm_cos_offset(X, W, np.zeros(3), 1.0, np.full(6, 2.0), out)
print(repr(float(out.sum())))
"""


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
    """Within 1 ulp of numpy's exp (itself within 1 ulp of the true value) over
    [-700, 0], near 0 and at the reduction's interval ends (x = (k + 1/2) ln 2)."""
    rng = np.random.default_rng(1)
    ends = (np.arange(-1000, 1) + 0.5) * np.log(2.0)
    x = np.concatenate([_grid(-700.0, 0.0), -rng.uniform(0, 1, 10**5),
                        -rng.uniform(0, 1e-12, 10**4), ends[ends > -700],
                        np.nextafter(ends[ends > -700], 0), [0.0, -0.0, -5e-324]])
    out = np.empty_like(x)
    nbk.fast_exp(x, out)
    ref = np.exp(x)
    assert np.max(np.abs(out - ref) / ref) <= 4e-16
    ulps = np.abs(out - ref) / np.spacing(ref)
    assert ulps.max() <= 1.0, (ulps.max(), x[ulps.argmax()])
    tiny = np.array([-708.5, -745.0, -1e4, -np.inf])
    out = np.empty_like(tiny)
    nbk.fast_exp(tiny, out)
    assert np.all(out <= 1e-307) and np.all(out >= 0)


def test_fast_acos_accuracy_in_ulps():
    """The vectorised acos against numpy's over the whole domain: 10^6 uniform points, the
    approach to +-1 (1 - 10^-17 .. 0), the branch point +-1/2 and its neighbours, and the
    ends: within 1 ulp of numpy's value (numpy's is within 1 ulp of the true one)."""
    rng = np.random.default_rng(3)
    near = np.logspace(-17, 0, 4000)
    x = np.concatenate([rng.uniform(-1.0, 1.0, 10**6), 1.0 - near, near - 1.0,
                        np.nextafter(0.5, [0.0, 1.0]), np.nextafter(-0.5, [0.0, -1.0]),
                        [-1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1e-300, -1e-300]])
    out = np.empty_like(x)
    nbk.fast_acos(x, out)
    ref = np.arccos(x)
    ulps = np.abs(out - ref) / np.spacing(np.maximum(ref, np.finfo(float).tiny))
    assert ulps.max() <= 1.0, (ulps.max(), x[ulps.argmax()])
    assert out[-3] == 0.0 and out[-8] == math.pi  # acos(1) = 0, acos(-1) = pi (rounded)


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


def test_abs_max_sum_sq(rng):
    E = rng.normal(size=(50, 60))
    mx, sa, s2 = nbk.abs_max_sum_sq(E)
    assert mx == np.abs(E).max()
    assert np.isclose(sa, np.abs(E).sum(), rtol=1e-13)
    assert np.isclose(s2, (E**2).sum(), rtol=1e-13)


def test_fast_exp_full_range():
    """The positive map's exp: any argument, overflow to inf and gradual underflow as
    numpy's exp, NaN kept."""
    x = np.concatenate([_grid(-745.5, 710.0, 1_000_001),
                        [0.0, -0.0, np.nan, np.inf, -np.inf, 709.78, -745.13, 1e300, -1e300]])
    out = np.empty_like(x)
    nbk.fast_exp_full(x, out)
    with np.errstate(over="ignore"):
        ref = np.exp(x)
    normal = np.isfinite(ref) & (ref >= np.finfo(np.float64).tiny)
    assert np.max(np.abs(out[normal] / ref[normal] - 1.0)) <= 4e-16
    sub = (ref > 0) & (ref < np.finfo(np.float64).tiny)
    assert sub.sum() > 1000 and np.max(np.abs(out[sub] - ref[sub])) <= 2 * 5e-324
    assert np.array_equal(np.isinf(out), np.isinf(ref)) and np.array_equal(out == 0, ref == 0)
    assert np.array_equal(np.isnan(out), np.isnan(ref))


def test_fast_exp_upper_range():
    """The exponential dot-product kernel's exp: within 1 ulp of numpy's up to its
    overflow (inf where numpy's is), 0 below -708 (true value < 3.3e-308), NaN kept."""
    x = np.concatenate([_grid(-708.0, 709.78, 1_000_001),
                        [0.0, -0.0, 709.782, 709.783, 709.79, 710.0, 1e300, np.inf]])
    out = np.empty_like(x)
    nbk.fast_exp_upper(x, out)
    with np.errstate(over="ignore"):
        ref = np.exp(x)
    fin = np.isfinite(ref)
    ulps = np.abs(out[fin] - ref[fin]) / np.spacing(ref[fin])
    assert ulps.max() <= 1.0, (ulps.max(), x[fin][ulps.argmax()])
    assert np.array_equal(np.isinf(out), ~fin)
    low = np.array([-708.01, -745.0, -1e300, -np.inf, np.nan])
    out = np.empty_like(low)
    nbk.fast_exp_upper(low, out)
    assert np.array_equal(out[:4], np.zeros(4)) and np.isnan(out[4])


def test_fast_exp_float32_accuracy():
    x = np.concatenate([_grid(-87.0, 0.0, 500_001), [0.0, -0.0, -87.0]]).astype(np.float32)
    out = np.empty_like(x)
    nbk.fast_exp_f32(x, out)
    ref = np.exp(x.astype(np.float64))
    assert out.dtype == np.float32
    # a few float32 ulp (2^-24 relative each): the reduction's and the polynomial's rounding
    assert np.max(np.abs(out / ref - 1.0)) <= 4 * 2.0**-24
    below = np.array([-87.5, -200.0, -np.inf], dtype=np.float32)
    nbk.fast_exp_f32(below, out[:3])
    assert np.all(out[:3] == 0.0)


@pytest.mark.parametrize("make", _kernel_cases())
@pytest.mark.parametrize("n,m", [(300, 1), (600, 3)])
def test_kernel_times_matches_numpy(make, n, m, rng):
    """Symmetric (I <= J, diagonal tiles, padding) and rectangular products, float64
    and mixed precision, and the Gram tiles, against the numpy Gram times V."""
    from rffbench.exact.tiles import TiledRows, tiled_gram, tiled_times

    X = np.abs(rng.standard_normal((n, 5))) + 0.05
    Y = np.abs(rng.standard_normal((97, 5))) + 0.05
    V = rng.standard_normal((n, m))
    k = make().fit(X)
    spec = k.tile_spec()
    Xw, Yw = k.inputs(X), k.inputs(Y)
    K = _numpy_gram(k, X, X)
    ref = K @ V
    scale = np.abs(K).sum(axis=1).max() * np.abs(V).max()
    rows = TiledRows(spec, Xw)
    assert np.max(np.abs(tiled_times(spec, rows, rows, V, symmetric=True) - ref)) <= 1e-13 * scale
    got = tiled_times(spec, TiledRows(spec, Yw), rows, V)
    assert np.max(np.abs(got - _numpy_gram(k, Y, X) @ V)) <= 1e-13 * scale
    r32 = TiledRows(spec, Xw.astype(np.float32))
    mixed = tiled_times(spec, r32, r32, V, symmetric=True)
    # float32 kernel values: ~1e-7 relative each (arc-cosine 0: the angle's step near
    # parallel rows, 1e-5), summed in float64
    tol = 1e-4 if k.name == "arccos0" else 2e-6
    assert np.max(np.abs(mixed - ref)) <= tol * scale
    G = tiled_gram(spec, rows, TiledRows(spec, Yw))
    assert np.max(np.abs(G - _numpy_gram(k, X, Y))) <= 1e-13 * max(1.0, np.abs(K).max())


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


@pytest.mark.parametrize("name,params", [("gaussian", {}), ("matern", {"nu": 2.5}),
                                         ("exp_dot", {"lengthscale": 1.0})])
def test_fused_one_column_products_keep_the_tiles_values(rng, name, params):
    """One column: the GEMM tiles' values are folded into the outputs as they are made
    (``fold_row``, sums reassociated); their values are the value tile's to the bit (the
    exp compiled apart keeps its rounding): K e_j through the fused loop equals the
    first column of K [e_j, e_j] through the value tile and BLAS, exactly (one nonzero
    term per sum), symmetric and rectangular, the exponential dot product with and
    without its norm bound."""
    from rffbench.exact.tiles import TiledRows, tiled_times

    X = 0.5 * rng.standard_normal((700, 3))
    Y = 0.5 * rng.standard_normal((300, 3))
    if name == "exp_dot":  # Y's first rows: |y| |x| above 708 (no bound), y.x below overflow
        X[:3] = [[26.5, 0, 0], [0, 26.0, 0], [0.1, 0.1, 26.4]]
        Y[:2] = [[26.75, 0, 0], [0, 0, 26.85]]
    k = make_kernel_for_test(name, params).fit(X)
    spec = k.tile_spec()
    # the rows as Kernel.inputs prepares them (C-contiguous, warped), without its value
    # check: exp_dot's rows here go past what the API accepts, on purpose
    rx, ry = (TiledRows(spec, np.ascontiguousarray(k.warp(A))) for A in (X, Y))
    for j in (1, 300, 650):
        e = np.zeros((700, 1))
        e[j] = 1.0
        ee = np.hstack([e, e])
        assert np.array_equal(tiled_times(spec, rx, rx, e, symmetric=True)[:, 0],
                              tiled_times(spec, rx, rx, ee, symmetric=True)[:, 0])
        assert np.array_equal(tiled_times(spec, ry, rx, e)[:, 0],
                              tiled_times(spec, ry, rx, ee)[:, 0])


@pytest.mark.parametrize("transpose", [False, True])
def test_tile_times_vector_matches_numpy(rng, transpose):
    """The one-column products of a tile in one pass: out[i0:] += K v[j0:] and, with
    ``transpose``, out[j0:] += K^T v[i0:], against numpy (reassociated sums: rounding)."""
    from rffbench._numba.products import tile_times_vector

    T = 64
    K = rng.standard_normal((T, T))
    v = rng.standard_normal(3 * T)
    out = rng.standard_normal(3 * T)
    ref = out.copy()
    ref[0:T] += K @ v[2 * T:]
    if transpose:
        ref[2 * T:] += K.T @ v[:T]
    tile_times_vector(K, v, out, 0, 2 * T, transpose)
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-13 * np.abs(K).sum(1).max())
    assert np.array_equal(out[T:2 * T], ref[T:2 * T])  # rows outside both tiles untouched


@pytest.mark.parametrize("n", [1, 2, 31])
def test_sums_of_minima_in_row_pairs_and_the_odd_row(rng, n):
    """The intersection kernel and the L1 distance through the two-row loop (and the
    single row left over for odd n), d = 7 (a group of four and three single
    coordinates), against numpy."""
    X, Y = np.abs(rng.normal(size=(n, 7))), np.abs(rng.normal(size=(13, 7)))
    out = np.empty((n, 13))
    nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, nbk.INTERSECTION,
                        nbk.PROFILE_NONE, 0.5)
    ref = 0.5 * np.minimum(X[:, None, :], Y[None, :, :]).sum(-1)
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=0)
    nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, nbk.L1DIST, nbk.PROFILE_EXP, 0.3)
    ref = np.exp(-0.3 * np.abs(X[:, None, :] - Y[None, :, :]).sum(-1))
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=0)


@pytest.mark.parametrize("n,m,d,c,chunks", [(1, 1, 1, 1, 1), (40, 17, 3, 2, 2),
                                             (300, 55, 6, 1, 4)])
def test_sorted_minima_times_matches_numpy(rng, n, m, d, c, chunks):
    """The sums of minima through sorted coordinates against numpy's minima times V: ties
    (coordinates rounded to tenths, zeros, query rows equal to fitted ones) on either
    side of a position, several columns, the coordinates split into runs; each entry
    within a few ulps of the sum of |v_b| min(a_k, b_k) (compensated prefix sums)."""
    B = np.round(rng.uniform(0, 1, (n, d)), 1)
    A = np.round(rng.uniform(0, 1.2, (m, d)), 1)
    A[0] = B[0]
    V = rng.standard_normal((n, c))
    order = np.argsort(B.T, axis=1, kind="stable")
    xs = np.take_along_axis(B.T, order, axis=1)
    At = np.ascontiguousarray(A.T)
    for side in ("left", "right"):  # ties before or after: the same minima
        pos = np.stack([np.searchsorted(xs[k], At[k], side=side) for k in range(d)])
        parts = np.zeros((chunks, m, c))
        nbk.sorted_minima_times(order, xs, At, pos, V, parts)
        Kmin = np.minimum(A[:, None, :], B[None, :, :]).sum(-1)
        scale = np.abs(Kmin) @ np.abs(V)
        assert np.all(np.abs(parts.sum(0) - Kmin @ V) <= 4 * d * 2.0**-52 * scale)


@pytest.mark.parametrize("name,d", [("gaussian", 4), ("intersection", 37)])
def test_kernel_times_threads_bitwise(rng, name, d):
    """The symmetric product's chunks (the tiles' pairs; the intersection kernel's runs of
    sorted coordinates) do not depend on the thread count: same bits."""
    import numba

    from rffbench.exact.tiles import TiledRows, tiled_times
    from rffbench.kernels import make_kernel

    X = rng.uniform(0, 1, (700, d))
    V = rng.standard_normal((700, 2))
    k = make_kernel(name).fit(X)
    rows = TiledRows(k.tile_spec(), k.inputs(X))
    before = numba.get_num_threads()
    try:
        out = []
        for t in (1, before):
            numba.set_num_threads(t)
            out.append(tiled_times(k.tile_spec(), rows, rows, V, symmetric=True))
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(out[0], out[1])


@pytest.mark.slow
def test_a_run_compiles_only_what_it_needs_and_every_function_is_cached(tmp_path):
    """The default run on an empty numba cache compiles each function it uses once, for
    its kernel's codes only (the Gaussian profile: no other profile's or kind's code),
    not the fused kernel product that a prediction of its size does not use; the same run
    again compiles nothing: every compiled function was cached (cache=True)."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT

    script = tmp_path / "watch.py"
    script.write_text(COMPILE_WATCH)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), MPLBACKEND="Agg")

    def run(i):
        out = tmp_path / f"compiled{i}.json"
        p = subprocess.run([sys.executable, str(script), str(out),
                            f"hydra.run.dir={tmp_path / f'r{i}'}"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        return json.loads(out.read_text())

    cold = run(1)
    names = [n for n, _ in cold]
    own = [(n, a) for n, a in cold if "._ov_" not in n]  # not overloads' inline bodies
    assert own and len(own) == len(set(own)), "a function compiled twice"
    gram = [(n, a) for n, a in cold if ".gram." in n]
    assert gram and not any("_times_chunk" in n or "kernel_times" in n for n, _ in gram), names
    for n, args in gram:  # literal codes: the Gaussian's profile (1) only
        literals = [int(v) for v in re.findall(r"Literal\[int\]\((\d+)\)", args)]
        assert set(literals) <= {0, 1}, (n, args)
    assert run(2) == [], "compiled again: not cached"


def test_the_records_name_numbas_threading_layer():
    """A timing is read with the threading layer it ran on: runtime_env names it once a
    parallel function has run (workqueue transformed 5-10x slower than OpenMP here)."""
    import numba

    from rffbench import runtime_env
    from rffbench.features import RandomFourierFeatures

    X = np.random.default_rng(0).standard_normal((64, 3))
    RandomFourierFeatures(kernel="gaussian", n_components=16, random_state=0).fit_transform(X)
    assert f"numba_layer={numba.threading_layer()}" in runtime_env()


def test_wide_vectors_sets_the_preferred_vector_width():
    """wide_vectors() puts "prefer-vector-width"="512" on the function that calls it
    (LLVM's tuning for AVX-512 CPUs otherwise vectorises with 256-bit vectors), and the
    function still computes the same values; on an AVX-512 machine its loop runs on zmm
    registers, which the same loop without the call does not use."""
    import numba as nb

    from rffbench._numba.elementwise import FMA, fast_exp_scalar, wide_vectors

    def body(x, out):
        for j in range(x.shape[0]):
            out[j] = fast_exp_scalar(x[j])

    def wide(x, out):
        wide_vectors()
        body_inline(x, out)

    body_inline = nb.njit(inline="always", fastmath=FMA)(body)
    narrow_fn = nb.njit(fastmath=FMA, error_model="numpy")(body)
    wide_fn = nb.njit(fastmath=FMA, error_model="numpy")(wide)
    x = -np.linspace(0.0, 700.0, 1001)
    a, b = np.empty_like(x), np.empty_like(x)
    narrow_fn(x, a)
    wide_fn(x, b)
    assert np.array_equal(a, b) and np.allclose(b, np.exp(x), rtol=1e-15, atol=0)
    attr = '"prefer-vector-width"="512"'
    assert attr in next(iter(wide_fn.inspect_llvm().values()))
    assert attr not in next(iter(narrow_fn.inspect_llvm().values()))
    if _has_avx512():
        assert "zmm" in next(iter(wide_fn.inspect_asm().values()))
        # where LLVM's tuning for the host prefers 256-bit vectors (Intel's AVX-512 cores),
        # the same loop without the call does not use them; on CPUs tuned for 512-bit
        # vectors already (AMD's Zen 4: znver4) both do, and the call changes nothing
        import llvmlite.binding as ll

        if ll.get_host_cpu_name() not in PREFER_512_CPUS:
            assert "zmm" not in next(iter(narrow_fn.inspect_asm().values()))


@pytest.mark.slow
def test_the_hot_loops_are_compiled_for_the_widest_vectors(tmp_path):
    """The functions whose loops make the exact products' tiles (and fold a one-column
    product's values) and the rff map's cosine (compiled afresh, in their own process:
    cached functions carry no IR to read) carry the preferred width, and on an AVX-512
    machine run on zmm registers."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT

    script = tmp_path / "hot.py"
    script.write_text(HOT_PATHS)
    out = tmp_path / "seen.json"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, str(script), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    seen = json.loads(out.read_text())
    assert set(seen) == {"_times_chunk", "fold_row", "scaled_sqdist_row", "_cos_block"}
    for name, (compiled, marked, zmm) in seen.items():
        assert compiled >= 1 and marked, (name, seen)
        if _has_avx512():
            assert zmm > 0, (name, seen)


def test_a_change_to_any_module_recompiles_every_cached_function(tmp_path):
    """numba keys a function's cached code by its own file only, but the compiled code
    inlines the helpers of the other modules (the BLAS call of blas.py inside the maps'
    passes): after a change to blas.py alone, the passes kept the old code (the fix of
    the d = 1 leading dimension did not reach them).  rffbench._numba.cache keys every
    function by all the package's modules: a copy of the package, run, then its blas.py
    changed (alpha 1 -> 2) and run again, gives the new values."""
    import shutil
    import subprocess
    import sys

    from rffbench._numba import cache

    pkg = tmp_path / "_numba"
    shutil.copytree(Path(cache.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # in the copy

    def probe():
        p = subprocess.run([sys.executable, "-c", CACHE_PROBE, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        return float(p.stdout.strip().splitlines()[-1])

    X = np.linspace(-1.0, 1.0, 6)[:, None]
    first = probe()
    assert first == pytest.approx(float(np.cos(X @ np.full((1, 3), 0.7)).sum()), rel=1e-12)
    assert any(pkg.glob("__pycache__/*.nbi"))  # cached in the copy's own folder
    stamp = cache.package_stamp(str(pkg))
    blas = pkg / "blas.py"
    text = blas.read_text()
    assert "ab[0] = 1.0" in text
    blas.write_text(text.replace("ab[0] = 1.0", "ab[0] = 2.0"))
    assert cache.package_stamp(str(pkg)) != stamp
    second = probe()
    assert second == pytest.approx(float(np.cos(2.0 * X @ np.full((1, 3), 0.7)).sum()),
                                   rel=1e-12)


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


def test_parallel_chunks_runs_each_chunk_once_on_at_most_the_threads():
    """Every chunk once, on numba.get_num_threads() threads at most (the caller's among
    them); one thread: all in the caller's, in order."""
    import threading

    import numba

    from rffbench._numba.threads import parallel_chunks

    seen = []
    parallel_chunks(37, lambda c: seen.append((c, threading.get_ident())))
    assert sorted(c for c, _ in seen) == list(range(37))
    assert len({t for _, t in seen}) <= numba.get_num_threads()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        seen.clear()
        parallel_chunks(5, lambda c: seen.append((c, threading.get_ident())))
    finally:
        numba.set_num_threads(before)
    assert seen == [(c, threading.get_ident()) for c in range(5)]


def test_parallel_chunks_raises_the_first_error_and_starts_no_chunk_after_it():
    import numba

    from rffbench._numba.threads import parallel_chunks

    started = []

    def body(c):
        started.append(c)
        if c == 5:
            raise ValueError("chunk 5")

    with pytest.raises(ValueError, match="chunk 5"):
        parallel_chunks(1000, body)
    assert 5 in started and len(started) <= 6 + numba.get_num_threads()


def test_entry_compiles_once_per_types_and_literal_code():
    """entry(): one version per argument types and literal value (a Literal[int] in its
    signature, as numba's own ``literally`` dispatch makes), found again without compiling."""
    import numba
    from numba import literally

    from rffbench._numba.threads import entry

    @numba.njit(nogil=True, cache=False)
    def scaled_sum(x, code):
        literally(code)
        return x.sum() * code

    x = np.arange(4.0)
    ep = entry(scaled_sum, (x, 3), literal=(1,))
    assert ep(x, 3) == 18.0
    assert entry(scaled_sum, (x + 1, 3), literal=(1,)) is ep
    assert len(scaled_sum.signatures) == 1
    assert "Literal[int](3)" in str(scaled_sum.signatures[0])
    ep2 = entry(scaled_sum, (x.astype(np.float32), 3), literal=(1,))
    ep3 = entry(scaled_sum, (x, 2), literal=(1,))
    assert ep2 is not ep and ep3 is not ep and ep3(x, 2) == 12.0
    assert ep2(x.astype(np.float32), 3) == 18.0 and len(scaled_sum.signatures) == 3
    strided = np.arange(8.0)[::2]  # another layout: another version, not ep's
    assert entry(scaled_sum, (strided, 3), literal=(1,)) is not ep
