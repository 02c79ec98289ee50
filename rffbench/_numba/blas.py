"""Matrix products inside compiled loops: one BLAS GEMM call, cheap to compile.

numba's ``np.dot`` typechecks and lowers a product for every layout of its operands
(a row block, a transposed tile, an output slice) and checks the shapes with
formatted error messages: three products in the exact kernel products took 3.7 s of
the 12.8 s their kernel compiled in on a fresh install.  :func:`gemm` calls the BLAS
GEMM that numba's own ``np.dot`` calls (``numba_xxgemm`` of numba's helper library:
scipy's BLAS, referenced by name, so the compiled code is cached like any other) with
the operands' row strides, and can accumulate into its output (``beta = 1``), which
saves the temporary and the ``+=`` pass of ``out[...] += A @ B``.

Operands are C-contiguous 2-d arrays (numba's layout C: an array, or a block of its rows);
the caller limits BLAS to one thread inside parallel loops (:func:`blas_single_thread`).

The leading dimensions are the operands' widths (:func:`leading_dimension`), never their
row strides: numpy calls an array C-contiguous whatever the stride of an axis of length
one, so a single row (``x[None, :]``, ``np.broadcast_to(x, (1, d))``, a Fortran (1, d)
buffer, ``np.empty((d, 1)).T``) or a (1, m) operand (the weights at d = 1) can carry a
row stride of 8 or 0 bytes, which BLAS refuses ("parameter number 8 had an illegal
value"), leaving the output unwritten.  For a C-contiguous array the element (i, j)
lies at i * width + j whatever its strides say, so the width is the one leading
dimension that is right for every such array, and the smallest that BLAS accepts.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba import prange, types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.linalg import ensure_blas

#: numba's helper: int numba_xxgemm(char kind, char transa, char transb, intp m, intp n,
#: intp k, void *alpha, void *a, intp lda, void *b, intp ldb, void *beta, void *c,
#: intp ldc), declared with void pointers so that float64 and float32 products can meet in
#: one compiled module (numba's own declaration types the pointers by dtype)
_XXGEMM = types.ExternalFunction("numba_xxgemm", types.intc(
    types.char, types.char, types.char, types.intp, types.intp, types.intp, types.voidptr,
    types.voidptr, types.intp, types.voidptr, types.intp, types.voidptr, types.voidptr,
    types.intp))


def gemm(A, B, C, trans_a, trans_b, beta):
    """C <- op(A) @ op(B) + beta C (op: the transpose when ``trans_a`` / ``trans_b``,
    compile-time constants), in A's float dtype (float64 or float32; A, B and C alike)."""


@overload(gemm, prefer_literal=True)
def _ov_gemm(A, B, C, trans_a, trans_b, beta):
    if not (isinstance(trans_a, types.BooleanLiteral)
            and isinstance(trans_b, types.BooleanLiteral)):
        return None  # numba tries again with the literal flags
    arrays = (A, B, C)
    if any(not isinstance(x, types.Array) or x.ndim != 2 or x.layout != "C" for x in arrays):
        raise TypingError("gemm: A, B and C must be 2-d arrays of contiguous rows (layout C)")
    if not (A.dtype == B.dtype == C.dtype) or A.dtype not in (types.float64, types.float32):
        raise TypingError("gemm: A, B and C must share one dtype, float64 or float32")
    ensure_blas()
    xxgemm = _XXGEMM
    kind = ord("d") if A.dtype == types.float64 else ord("s")
    # row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: BLAS reads each
    # row-major operand as its transpose, so the operands swap and the flags stay
    flag_a = ord("t") if trans_a.literal_value else ord("n")
    flag_b = ord("t") if trans_b.literal_value else ord("n")
    k_axis = 0 if trans_a.literal_value else 1

    def impl(A, B, C, trans_a, trans_b, beta):
        m, n = C.shape
        k = A.shape[k_axis]
        if m == 0 or n == 0:
            return
        ab = np.empty(2, C.dtype)
        ab[0] = 1.0
        ab[1] = beta
        xxgemm(kind, flag_b, flag_a, n, m, k, ab[0:].ctypes, B.ctypes,
               leading_dimension(B), A.ctypes, leading_dimension(A), ab[1:].ctypes,
               C.ctypes, leading_dimension(C))

    return impl


@register_jitable
def leading_dimension(M):
    """The leading dimension of a C-contiguous row-major matrix read by a column-major
    BLAS: its width, at least 1 (module docs: never its row stride)."""
    return max(1, M.shape[1])


@nb.njit(parallel=True, nogil=True, cache=True)
def gemm_each_thread(A, B, C):
    """C[t] <- A[t] @ B for every t, each product one single-threaded BLAS GEMM on its own
    thread (the caller limits BLAS to one thread): the aggregate GEMM rate of the threads
    as the fused maps use them, a limit's peak (rffbench.measure.limits)."""
    for t in prange(A.shape[0]):
        gemm(A[t], B, C[t], False, False, 0.0)



_BLAS = None


def blas_single_thread():
    """Context: BLAS limited to one thread (the fused kernels call it from every
    numba thread).  The controller is built once, after the BLAS libraries are
    loaded (numba's np.dot uses scipy's)."""
    global _BLAS
    if _BLAS is None:
        import scipy.linalg.cython_blas  # noqa: F401  (load scipy's BLAS before scanning)
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")
