"""rffbench/_numba/blas.py: the one GEMM call of the compiled loops against numpy's product,
over shapes from 1, both dtypes, both transposes, accumulation, and the single-row views
whose row strides BLAS refuses as leading dimensions."""
import itertools

import numba
import numpy as np
import pytest

from rffbench._numba.blas import gemm


@numba.njit(cache=True)
def _product(A, B, C, trans_a, trans_b, beta):
    if trans_a:
        if trans_b:
            gemm(A, B, C, True, True, beta)
        else:
            gemm(A, B, C, True, False, beta)
    elif trans_b:
        gemm(A, B, C, False, True, beta)
    else:
        gemm(A, B, C, False, False, beta)


def _operand(M, view):
    """M as a C-contiguous array of another making: a copy, a single row broadcast (row
    stride 0), a row of a Fortran buffer, the transpose of a column."""
    if view == "copy" or M.shape[0] != 1:
        return np.ascontiguousarray(M)
    if view == "broadcast":  # np.broadcast_to's strides, writable: one compiled type
        row = np.ascontiguousarray(M[0])
        return np.lib.stride_tricks.as_strided(row, M.shape, (0, row.strides[0]))
    if view == "fortran":
        out = np.asfortranarray(M)
        return out
    return np.ascontiguousarray(M[0])[:, None].T  # (1, w) with a row stride of 8 bytes


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gemm_is_numpys_product(dtype, rng):
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for (m, n, k), ta, tb, beta, view in itertools.product(
            [(1, 1, 1), (1, 5, 3), (4, 1, 2), (7, 6, 1), (17, 9, 33)], (False, True),
            (False, True), (0.0, 1.0), ("copy", "broadcast", "fortran", "column")):
        A = rng.normal(size=(k, m) if ta else (m, k)).astype(dtype)
        B = rng.normal(size=(n, k) if tb else (k, n)).astype(dtype)
        C0 = rng.normal(size=(m, n)).astype(dtype)
        want = (A.T if ta else A) @ (B.T if tb else B) + beta * C0
        A_in, B_in = _operand(A, view), _operand(B, view)
        if not (A_in.flags.c_contiguous and B_in.flags.c_contiguous):
            continue  # a broadcast of more than one row is not an operand of layout C
        C = C0.copy()
        _product(A_in, B_in, C, ta, tb, dtype(beta))
        np.testing.assert_allclose(C, want, rtol=rtol, atol=rtol * k,
                                   err_msg=f"{(m, n, k, ta, tb, beta, view)}")


def test_gemm_of_an_empty_output_writes_nothing():
    A, B = np.ones((0, 3)), np.ones((3, 4))
    C = np.empty((0, 4))
    _product(A, B, C, False, False, 0.0)
    assert C.shape == (0, 4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("T,s", [(1, 1), (2, 3), (3, 17)])
def test_gemm_each_thread_is_numpys_product_per_slice(T, s, dtype, rng):
    """The limit's peak cell: C[t] = A[t] @ B for every slice, one BLAS call per thread."""
    from threadpoolctl import threadpool_limits

    from rffbench._numba import gemm_each_thread

    A = rng.standard_normal((T, s, s)).astype(dtype)
    B = rng.standard_normal((s, s)).astype(dtype)
    C = np.full((T, s, s), np.nan, dtype=dtype)
    with threadpool_limits(limits=1, user_api="blas"):
        gemm_each_thread(A, B, C)
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(C, A @ B, rtol=tol, atol=tol * s)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matmul_is_numpys_product_in_every_layout(dtype, rng):
    """The Python products' entry on this process's BLAS (numpy's matmul under the
    default; the GEMM above under oneMKL, where tests/test_blas_choice.py runs this file):
    C, Fortran and strided operands, an output given in either order or none."""
    from rffbench._numba.blas import matmul

    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for (m, n, k), la, lb, lo in itertools.product(
            [(1, 1, 1), (1, 5, 3), (4, 1, 2), (17, 9, 33)], ("C", "F", "strided"),
            ("C", "F", "strided"), ("none", "C", "F")):
        A = rng.normal(size=(m, 2 * k)).astype(dtype)[:, ::2] if la == "strided" else \
            np.asarray(rng.normal(size=(m, k)), dtype=dtype, order=la)
        B = rng.normal(size=(k, 2 * n)).astype(dtype)[:, ::2] if lb == "strided" else \
            np.asarray(rng.normal(size=(k, n)), dtype=dtype, order=lb)
        want = A.astype(np.float64) @ B.astype(np.float64)
        out = None if lo == "none" else np.full((m, n), np.nan, dtype=dtype, order=lo)
        got = matmul(A, B, out=out)
        assert got.dtype == dtype and (out is None or got is out)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * k,
                                   err_msg=f"{(m, n, k, la, lb, lo)}")
