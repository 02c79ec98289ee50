"""rffbench/_numba/products.py: the fused kernel products K V against K @ V from the numpy
Gram of the kernel."""

import numpy as np
import pytest

from rffbench import _numba as nbk


# --------------------------------------------------------------------------
# the fused kernel products, against K @ V from the numpy Gram of the kernel
def _kernel_cases():
    from rffbench.kernels import make_kernel

    for name, params in [("gaussian", {}), ("laplacian", {}), ("cauchy", {}),
                         ("matern", {"nu": 0.5}), ("matern", {"nu": 1.5}),
                         ("matern", {"nu": 2.5}), ("arccos0", {}), ("arccos1", {}),
                         ("polynomial", {"degree": 3}), ("additive_chi2", {}),
                         ("skewed_chi2", {}), ("intersection", {})]:
        kid = name + "".join(f"-{v}" for v in params.values())
        # a kernel's cases in one pytest-xdist worker: on a cold numba cache its product is
        # compiled once there, not in both workers at once (13.6 s twice for intersection)
        yield pytest.param(lambda name=name, params=params: make_kernel(name, **params),
                           id=kid, marks=pytest.mark.xdist_group(f"kernel_times-{kid}"))


def _numpy_gram(kernel, X, Y):
    """k(X, Y) as a matrix: the kernel's Gram (tested against scipy references in
    tests/test_kernels.py), for numpy's K @ V."""
    return np.asarray(kernel.gram(X, Y), dtype=np.float64)


def make_kernel_for_test(name, params):
    from rffbench.kernels import make_kernel

    return make_kernel(name, **params)


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
    # arc-cosine 0 at near-parallel rows: acos's infinite slope at 1 makes a cosine's
    # rounding of eps an angle of sqrt(2 eps), a value ~1e-8 off (seen where the tiles'
    # BLAS rounds otherwise than the reference's: oneMKL); the differential suite's 5e-8
    ftol = 5e-8 if k.name == "arccos0" else 1e-13
    assert np.max(np.abs(tiled_times(spec, rows, rows, V, symmetric=True) - ref)) <= ftol * scale
    got = tiled_times(spec, TiledRows(spec, Yw), rows, V)
    assert np.max(np.abs(got - _numpy_gram(k, Y, X) @ V)) <= ftol * scale
    r32 = TiledRows(spec, Xw.astype(np.float32))
    mixed = tiled_times(spec, r32, r32, V, symmetric=True)
    # float32 kernel values: ~1e-7 relative each (arc-cosine 0: the angle's step near
    # parallel rows, 1e-5), summed in float64
    tol = 1e-4 if k.name == "arccos0" else 2e-6
    assert np.max(np.abs(mixed - ref)) <= tol * scale
    G = tiled_gram(spec, rows, TiledRows(spec, Yw))
    assert np.max(np.abs(G - _numpy_gram(k, X, Y))) <= ftol * max(1.0, np.abs(K).max())


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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("i0,j0,h,w", [(0, 7, 5, 9), (3, 12, 1, 1), (0, 5, 13, 3)])
def test_mirror_tile_matches_numpy(rng, dtype, i0, j0, h, w):
    """The upper tile at (i0, j0) written transposed at (j0, i0) (odd sizes: a row piece
    shorter than a cache line); nothing else of the output touched."""
    n = 32
    out = rng.standard_normal((n, n)).astype(dtype)
    K = rng.standard_normal((h + 2, w + 3))  # the tile's values in float64, padded
    out[i0:i0 + h, j0:j0 + w] = K[:h, :w]
    want = out.copy()
    want[j0:j0 + w, i0:i0 + h] = K[:h, :w].T
    nbk.mirror_tile(K, out, i0, j0, h, w)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("T", [1, 5, 8])
def test_mirror_diagonal_matches_numpy(rng, dtype, T):
    """A diagonal tile's lower half from its upper half, exactly (the upper half and the
    diagonal untouched)."""
    K = rng.standard_normal((T, T)).astype(dtype)
    upper = np.triu(K)
    nbk.mirror_diagonal(K)
    np.testing.assert_array_equal(K, upper + np.triu(upper, 1).T)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 5, nbk.KERNEL_TILE, nbk.KERNEL_TILE + 1, 2 * nbk.KERNEL_TILE + 3])
def test_mirror_upper_matches_numpy(rng, dtype, n):
    """A square matrix's lower triangle from its upper one, exactly, at sizes below, at and
    across the tiles' (the upper triangle and the diagonal untouched)."""
    K = rng.standard_normal((n, n)).astype(dtype)
    upper = np.triu(K)
    nbk.mirror_upper(K)
    np.testing.assert_array_equal(K, upper + np.triu(upper, 1).T)
