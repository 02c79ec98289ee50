"""Matrix products inside compiled loops: one BLAS GEMM call, cheap to compile, on the
process's chosen BLAS.

numba's ``np.dot`` typechecks and lowers a product for every layout of its operands
(a row block, a transposed tile, an output slice) and checks the shapes with
formatted error messages: three products in the exact kernel products took 3.7 s of
the 12.8 s their kernel compiled in on a fresh install.  :func:`gemm` makes one call of
the GEMM entry ``rffbench_xxgemm`` with the operands' row strides, and can accumulate
into its output (``beta = 1``), which saves the temporary and the ``+=`` pass of
``out[...] += A @ B``.

The entry is referenced by name, so the compiled code is cached like any other, and is
linked when this module is imported, by ``RFFBENCH_BLAS`` (rffbench.blas_choice): to the
GEMM that numba's own ``np.dot`` calls (``numba_xxgemm`` of numba's helper library:
scipy's BLAS), or to a small compiled function that calls oneMKL's ``cblas_?gemm``.  The
same cached code serves both.  :func:`matmul` is the products' entry from Python: numpy's
``matmul`` under the default BLAS, this GEMM under oneMKL.

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

# absolute: this package is self-contained but for the choice it reads (a copy of it runs
# beside the installed rffbench: tests/_numba/test_cache.py)
from rffbench import blas_choice

#: the GEMM entry of the compiled code: int rffbench_xxgemm(char kind, char transa, char
#: transb, intp m, intp n, intp k, void *alpha, void *a, intp lda, void *b, intp ldb, void
#: *beta, void *c, intp ldc), numba's helper ``numba_xxgemm`` (scipy's BLAS) or oneMKL's
#: entry below, by the process's choice (module docs).  Referenced by name, so the cached
#: code is the same for both; declared with void pointers so that float64 and float32
#: products can meet in one compiled module (numba's own declaration types them by dtype)
_XXGEMM_SIG = types.intc(
    types.char, types.char, types.char, types.intp, types.intp, types.intp, types.voidptr,
    types.voidptr, types.intp, types.voidptr, types.intp, types.voidptr, types.voidptr,
    types.intp)
_XXGEMM = types.ExternalFunction("rffbench_xxgemm", _XXGEMM_SIG)


def _cblas_sig(real):
    i = types.intc
    return types.void(i, i, i, i, i, i, real, types.voidptr, i, types.voidptr, i, real,
                      types.voidptr, i)


#: oneMKL's cblas_dgemm / cblas_sgemm (LP64: 32-bit integers), under names of our own
_MKL_DGEMM = types.ExternalFunction("rffbench_mkl_dgemm", _cblas_sig(types.float64))
_MKL_SGEMM = types.ExternalFunction("rffbench_mkl_sgemm", _cblas_sig(types.float32))
#: CBLAS's enums: column-major, no transpose, transpose; and the flags' letters
_COL_MAJOR, _NO_TRANS, _TRANS, _T = 102, 111, 112, ord("t")
#: the largest dimension a 32-bit BLAS integer holds
INT32_MAX = 2**31 - 1


def _mkl_entry():
    """The address of a compiled function with ``numba_xxgemm``'s signature that calls
    oneMKL's CBLAS GEMM (compiled only in a process that chose oneMKL)."""
    from numba import carray, cfunc

    @cfunc(_XXGEMM_SIG, cache=True)
    def mkl_xxgemm(kind, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        if max(m, n, k, lda, ldb, ldc) > INT32_MAX:
            return -1
        ta = _TRANS if transa == _T else _NO_TRANS
        tb = _TRANS if transb == _T else _NO_TRANS
        mi, ni, ki = np.intc(m), np.intc(n), np.intc(k)
        la, lb, lc = np.intc(lda), np.intc(ldb), np.intc(ldc)
        if kind == 100:  # "d"
            _MKL_DGEMM(_COL_MAJOR, ta, tb, mi, ni, ki, carray(alpha, 1, np.float64)[0], a, la,
                       b, lb, carray(beta, 1, np.float64)[0], c, lc)
        else:
            _MKL_SGEMM(_COL_MAJOR, ta, tb, mi, ni, ki, carray(alpha, 1, np.float32)[0], a, la,
                       b, lb, carray(beta, 1, np.float32)[0], c, lc)
        return 0

    return mkl_xxgemm.address


def _link_chosen():
    """Point ``rffbench_xxgemm`` at the BLAS that ``RFFBENCH_BLAS`` asks for, before any
    compiled function that calls it is loaded: (choice, its library's version or None).
    RffbenchError (one line) for a value not allowed, or oneMKL asked for and missing."""
    import ctypes

    import llvmlite.binding as ll
    from numba import _helperlib

    choice = blas_choice.checked()
    version = None
    if choice == "default":
        address = _helperlib.c_helpers["xxgemm"]
    else:
        lib, version = blas_choice.load_mkl()
        for name, fn in (("rffbench_mkl_dgemm", lib.cblas_dgemm),
                         ("rffbench_mkl_sgemm", lib.cblas_sgemm)):
            ll.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)
        address = _mkl_entry()
    ll.add_symbol("rffbench_xxgemm", address)
    return choice, version


#: this process's BLAS for rffbench's products (``default`` or ``mkl``) and, for oneMKL,
#: its version
CHOSEN, CHOSEN_VERSION = _link_chosen()


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



@nb.njit(cache=True)
def _gemm_nn(A, B, C):
    gemm(A, B, C, False, False, 0.0)


@nb.njit(cache=True)
def _gemm_nt(A, B, C):
    gemm(A, B, C, False, True, 0.0)


@nb.njit(cache=True)
def _gemm_tn(A, B, C):
    gemm(A, B, C, True, False, 0.0)


@nb.njit(cache=True)
def _gemm_tt(A, B, C):
    gemm(A, B, C, True, True, 0.0)


_BY_FLAGS = {(False, False): _gemm_nn, (False, True): _gemm_nt, (True, False): _gemm_tn,
             (True, True): _gemm_tt}


def _rows(M):
    """(a C-contiguous array, transposed?) whose op is ``M``: M itself, the C-contiguous
    transpose of a Fortran-ordered M, or a C copy."""
    if M.flags.c_contiguous:
        return M, False
    if M.flags.f_contiguous:
        return M.T, True
    return np.ascontiguousarray(M), False


def matmul(A, B, out=None):
    """``A @ B`` (into ``out`` when given) on the process's chosen BLAS: numpy's
    ``matmul`` under the default, :func:`gemm` under oneMKL for 2-d float64 or float32
    operands of one dtype (any layout; anything else: numpy's)."""
    if CHOSEN == "default" or not (
            A.ndim == B.ndim == 2 and A.dtype == B.dtype
            and A.dtype in (np.float64, np.float32) and A.shape[1] == B.shape[0]
            and (out is None or (out.shape == (A.shape[0], B.shape[1])
                                 and out.dtype == A.dtype))):
        return np.matmul(A, B, out=out)
    a, ta = _rows(A)
    b, tb = _rows(B)
    C = out if out is not None and out.flags.c_contiguous and out.flags.writeable else \
        np.empty((A.shape[0], B.shape[1]), dtype=A.dtype)
    _BY_FLAGS[(ta, tb)](a, b, C)
    if out is not None and C is not out:
        out[...] = C
        return out
    return C


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
