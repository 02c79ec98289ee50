"""Every compiled loop of rffbench, and nothing else (no config, no I/O).

Each public function here has a plain-numpy reference in the test-suite
(``tests/test_numba.py``) that it is compared against.

Why hand-written elementary functions
-------------------------------------
numba >= 0.62 ships without Intel SVML, so ``math.cos``/``math.exp`` inside a
loop call scalar libm and the loop does not vectorise (measured ~14x slower
than the code below on an AVX-512 machine).  The functions below use only
multiply/add/floor/bit-casts, which LLVM vectorises.

* cosine/sine: Cody-Waite reduction by pi in three parts (cephes constants),
  ``x = k*pi + r`` with ``|r| <= pi/2``, then Taylor polynomials through
  r**20 (cos) and r**21 (sin), whose truncation error at |r| = pi/2 is below
  2e-17; ``cos(x) = (-1)**k cos(r)``.  The first part of pi has 24
  significant bits, so ``k*PI_A`` is exact for |k| < 2**29; arguments up to
  ``FAST_TRIG_MAX`` (1e8) keep the error at a few ulp of 1 (tested:
  max abs error < 1e-15 for |x| <= 1e4).  Rows holding a larger argument fall
  back to libm.
* exponential (for arguments <= 0, all kernels need): reduction by ln 2,
  Taylor polynomial of degree 13 on |r| <= ln2/2, scaling by 2**k through the
  exponent bits.  Relative error ~2 ulp; exp(x) for x < -708 returns 0
  (true value < 3e-308).  ``fast_exp_full_scalar``: any argument (the positive
  map's), 2**k applied as two factors, so it overflows to inf and underflows
  gradually exactly where libm's does.  ``fast_exp_f32_scalar``: float32, degree 7
  (1.3 float32 ulp), 8 lanes per AVX2 vector, for the mixed-precision kernel tiles.

float32 arrays are computed in float64 internally and rounded once on store.

Every parallel function is also ``nogil``: the bounds measurement calls them
from several Python threads at once (one numba thread each, thread-local).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np
from llvmlite import ir
from numba import prange
from numba import types
from numba.extending import intrinsic, overload

# --------------------------------------------------------------------------
# elementary functions
# --------------------------------------------------------------------------
INV_PI = 1.0 / math.pi
F32 = np.float32
PI_A = 3.14159250259399414062  # 24 significant bits: k*PI_A exact for |k| < 2**29
PI_B = 1.509957883172319270672e-7
PI_C = 1.07806057163162380858e-14
FAST_TRIG_MAX = 1.0e8

LN2_INV = 1.0 / math.log(2.0)
LN2_HI = 6.93147180369123816490e-01  # cephes/fdlibm split of ln 2
LN2_LO = 1.90821492927058770002e-10
EXP_MIN_ARG = -708.0

#: Only floating-point *contraction* (a*b + c -> fma) is allowed: it halves
#: the cost of Horner steps and range reduction and is never less accurate.
#: No reassociation, no NaN/inf assumptions.
FMA = {"contract"}


def _bitcast(src, dst, llvm_type):
    """An intrinsic reinterpreting the bits of a ``src`` integer as a ``dst`` float of
    the same width (a vectorisable bit-cast: how 2**k enters the exponent field)."""

    @intrinsic
    def cast(typingctx, x):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], llvm_type)

        return dst(src), codegen

    return cast


_i64_as_f64 = _bitcast(nb.types.int64, nb.types.float64, ir.DoubleType())
_i32_as_f32 = _bitcast(nb.types.int32, nb.types.float32, ir.FloatType())


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _reduce_pi(x):
    """x = k*pi + r, |r| <= pi/2; returns (r, sign) with sign = (-1)**k."""
    k = np.floor(x * INV_PI + 0.5)
    r = ((x - k * PI_A) - k * PI_B) - k * PI_C
    parity = k - 2.0 * np.floor(k * 0.5)
    return r, 1.0 - 2.0 * parity


#: Taylor coefficients, highest power first: cos(r) = sum_n (-1)^n z^n / (2n)!, z = r^2,
#: through n = 10; sin(r) = r + r sum_{n>=1} (-1)^n z^n / (2n+1)!, through n = 10;
#: exp(r) = sum_n r^n / n!, through n = 13 (|r| <= ln2 / 2)
COS_TAYLOR = (4.1103176233121648e-19, -1.5619206968586225e-16, 4.7794773323873853e-14,
              -1.1470745597729725e-11, 2.08767569878681e-09, -2.7557319223985888e-07,
              2.4801587301587302e-05, -0.0013888888888888889, 0.041666666666666664, -0.5, 1.0)
SIN_TAYLOR = (1.9572941063391263e-20, -8.2206352466243295e-18, 2.8114572543455206e-15,
              -7.6471637318198164e-13, 1.6059043836821613e-10, -2.505210838544172e-08,
              2.7557319223985893e-06, -0.00019841269841269841, 0.0083333333333333332,
              -0.16666666666666666, 0.0)
EXP_TAYLOR = (1.6059043836821613e-10, 2.08767569878681e-09, 2.505210838544172e-08,
              2.7557319223985888e-07, 2.7557319223985893e-06, 2.4801587301587302e-05,
              0.00019841269841269841, 0.0013888888888888889, 0.0083333333333333332,
              0.041666666666666664, 0.16666666666666666, 0.5, 1.0, 1.0)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _horner(z, c):
    """sum_k c[k] z^(n-1-k) by Horner's rule (c: a constant tuple; unrolled by LLVM)."""
    p = c[0]
    for k in range(1, len(c)):
        p = p * z + c[k]
    return p


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _cos_poly(z):
    return _horner(z, COS_TAYLOR)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _sin_poly(r, z):
    return r + r * (_horner(z, SIN_TAYLOR))


@nb.njit(inline="always", cache=True, fastmath=FMA)
def fast_cos_scalar(x):
    r, sign = _reduce_pi(x)
    return sign * _cos_poly(r * r)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def fast_sin_scalar(x):
    r, sign = _reduce_pi(x)
    return sign * _sin_poly(r, r * r)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def fast_exp_scalar(x):
    """exp(x) for x <= 0 (for x > 0 it is accurate up to x = 709)."""
    xc = max(x, EXP_MIN_ARG)
    k = np.floor(xc * LN2_INV + 0.5)
    r = (xc - k * LN2_HI) - k * LN2_LO
    p = _horner(r, EXP_TAYLOR)
    scale = _i64_as_f64((np.int64(k) + 1023) << 52)
    return p * scale if x >= EXP_MIN_ARG else 0.0


#: float32 exponential: cephes' split of ln 2 (LN2_HI_F has 12 significant bits, so
#: k * LN2_HI_F is exact for |k| < 2**12), Taylor through r^7 on |r| <= ln2/2 (truncation
#: 5e-9, below float32's half-ulp 6e-8), 2**k through the exponent bits
LN2_INV_F = F32(1.0 / math.log(2.0))
LN2_HI_F = F32(0.693359375)
LN2_LO_F = F32(-2.12194440e-4)
EXP_MIN_ARG_F = F32(-87.0)  # exp(-87) = 1.6e-38, above float32's smallest normal
EXP_TAYLOR_F = tuple(F32(1.0 / math.factorial(n)) for n in range(7, -1, -1))


@nb.njit(inline="always", cache=True, fastmath=FMA)
def fast_exp_f32_scalar(x):
    """exp(x) in float32 for float32 x <= 0 (0 below EXP_MIN_ARG_F); relative error a few
    float32 ulp.  8 lanes per AVX2 vector: the mixed-precision kernel products' exp."""
    xc = max(x, EXP_MIN_ARG_F)
    k = np.floor(xc * LN2_INV_F + F32(0.5))
    r = (xc - k * LN2_HI_F) - k * LN2_LO_F
    p = _horner(r, EXP_TAYLOR_F)
    scale = _i32_as_f32((np.int32(k) + np.int32(127)) << np.int32(23))
    return p * scale if x >= EXP_MIN_ARG_F else F32(0.0)


#: fast_exp_full_scalar: below, exp underflows to 0; above, it overflows to inf
EXP_FULL_MIN = -745.2
EXP_FULL_MAX = 709.79


@nb.njit(inline="always", cache=True, fastmath=FMA)
def fast_exp_full_scalar(x):
    """exp(x) over float64's whole range, vectorisable: the reduction of fast_exp_scalar
    and 2**k applied as 2**(k//2) * 2**(k - k//2), both factors normal for |k| <= 1075,
    so large results do not overflow early and tiny ones go gradually subnormal.
    NaN gives NaN."""
    xc = min(max(x, EXP_FULL_MIN), EXP_FULL_MAX)
    k = np.floor(xc * LN2_INV + 0.5)
    r = (xc - k * LN2_HI) - k * LN2_LO
    p = _horner(r, EXP_TAYLOR)
    ki = np.int64(k)
    k1 = ki >> 1
    s1 = _i64_as_f64((k1 + 1023) << 52)
    s2 = _i64_as_f64((ki - k1 + 1023) << 52)
    y = (p * s1) * s2
    y = 0.0 if x < EXP_FULL_MIN else y
    y = np.inf if x > EXP_FULL_MAX else y
    return x + y if x != x else y


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fast_exp_full(x, out):
    """out[i] = exp(x[i]) for 1-d arrays, any float64 x (accuracy-test entry point)."""
    for i in prange(x.shape[0]):
        out[i] = fast_exp_full_scalar(np.float64(x[i]))


def _exp_typed(x):
    """exp(x) (x <= 0) in the precision of x: float32 -> fast_exp_f32_scalar."""


@overload(_exp_typed)
def _ov_exp_typed(x):
    if x == types.float32:
        return lambda x: fast_exp_f32_scalar(x)
    return lambda x: fast_exp_scalar(x)


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fast_exp_f32(x, out):
    """out[i] = exp(x[i]) for 1-d float32 arrays with x <= 0 (accuracy-test entry point)."""
    for i in prange(x.shape[0]):
        out[i] = fast_exp_f32_scalar(x[i])


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fast_cos(x, out):
    """out[i] = cos(x[i]) for 1-d arrays (the accuracy-test entry point)."""
    for i in prange(x.shape[0]):
        out[i] = fast_cos_scalar(np.float64(x[i]))


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fast_sin(x, out):
    """out[i] = sin(x[i]) for 1-d arrays."""
    for i in prange(x.shape[0]):
        out[i] = fast_sin_scalar(np.float64(x[i]))


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fast_exp(x, out):
    """out[i] = exp(x[i]) for 1-d arrays with x <= 0."""
    for i in prange(x.shape[0]):
        out[i] = fast_exp_scalar(np.float64(x[i]))


# --------------------------------------------------------------------------
# feature-map passes (in place, after a BLAS GEMM has written X @ W)
# --------------------------------------------------------------------------
@nb.njit(inline="always", cache=True, fastmath=FMA)
def _cos_row(row, offset, scale, fast):
    """row[j] <- scale * cos(row[j] + offset[j]); libm unless ``fast``."""
    m = row.shape[0]
    if fast:
        for j in range(m):
            row[j] = scale * fast_cos_scalar(np.float64(row[j]) + offset[j])
    else:
        for j in range(m):
            row[j] = scale * math.cos(np.float64(row[j]) + offset[j])


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _sincos_core(args, m, scale, fast, row):
    """row[:m], row[m:2m] <- scale * [cos(args), sin(args)]; args may be row itself
    (each args[j] is read before row[j] is written); libm unless ``fast``."""
    if fast:
        for j in range(m):
            r, sign = _reduce_pi(np.float64(args[j]))
            z = r * r
            s = scale * sign
            row[m + j] = s * _sin_poly(r, z)
            row[j] = s * _cos_poly(z)
    else:
        for j in range(m):
            a = np.float64(args[j])
            row[m + j] = scale * math.sin(a)
            row[j] = scale * math.cos(a)


# float32: reduction and polynomials in float32 (16 lanes per AVX-512 vector).
# pi in three float32 parts; PI_A_F has 8 significant bits, so k*PI_A_F is exact
# for |k| < 2**16; rows whose argument bound exceeds FAST_TRIG_MAX_F32 use the
# float64 path.  Taylor through r^12 (cos) / r^13 (sin): truncation < 7e-9 at
# |r| = pi/2, below float32's half-ulp of 1 (6e-8).
INV_PI_F = F32(1.0 / math.pi)
PI_A_F = F32(3.140625)
PI_B_F = F32(9.67502593994140625e-4)
PI_C_F = F32(1.509957990978376432e-7)
FAST_TRIG_MAX_F32 = 8192.0
_C = [F32(v) for v in (1.0 / 479001600, -1.0 / 3628800, 1.0 / 40320, -1.0 / 720, 1.0 / 24,
                       -0.5, 1.0)]
_S = [F32(v) for v in (1.0 / 6227020800, -1.0 / 39916800, 1.0 / 362880, -1.0 / 5040,
                       1.0 / 120, -1.0 / 6)]
C12, C10, C8, C6, C4, C2, C0 = _C
S13, S11, S9, S7, S5, S3 = _S
HALF_F, ONE_F, TWO_F = F32(0.5), F32(1.0), F32(2.0)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _reduce_pi_f32(x):
    k = np.floor(x * INV_PI_F + HALF_F)
    r = ((x - k * PI_A_F) - k * PI_B_F) - k * PI_C_F
    parity = k - TWO_F * np.floor(k * HALF_F)
    return r, ONE_F - TWO_F * parity


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _cos_poly_f32(z):
    p = C12 * z + C10
    p = p * z + C8
    p = p * z + C6
    p = p * z + C4
    p = p * z + C2
    return p * z + C0


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _sin_poly_f32(r, z):
    p = S13 * z + S11
    p = p * z + S9
    p = p * z + S7
    p = p * z + S5
    p = p * z + S3
    return r + r * (p * z)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _cos_row_f32(row, offset, scale, bound):
    """float32 row <- scale * cos(row + offset), in float32 below FAST_TRIG_MAX_F32."""
    if bound <= FAST_TRIG_MAX_F32:
        sc = F32(scale)
        for j in range(row.shape[0]):
            r, sign = _reduce_pi_f32(row[j] + offset[j])
            row[j] = (sc * sign) * _cos_poly_f32(r * r)
    else:
        _cos_row(row, offset, scale, bound <= FAST_TRIG_MAX)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _sincos_to_f32(args, m, scale, bound, row):
    """row[:m], row[m:2m] <- scale * cos(args), scale * sin(args) (float32)."""
    if bound <= FAST_TRIG_MAX_F32:
        sc = F32(scale)
        for j in range(m):
            r, sign = _reduce_pi_f32(args[j])
            z = r * r
            s = sc * sign
            row[m + j] = s * _sin_poly_f32(r, z)
            row[j] = s * _cos_poly_f32(z)
    else:  # large arguments: the float64 reduction
        _sincos_core(args, m, scale, bound <= FAST_TRIG_MAX, row)


def _cos_row_typed(row, offset, scale, bound):
    """Compile-time dispatch on the row's dtype (see the overload below)."""


@overload(_cos_row_typed, inline="always")
def _ov_cos_row_typed(row, offset, scale, bound):
    if row.dtype == types.float32:
        return lambda row, offset, scale, bound: _cos_row_f32(row, offset, scale, bound)
    return lambda row, offset, scale, bound: _cos_row(row, offset, scale,
                                                      bound <= FAST_TRIG_MAX)


def _sincos_to_typed(args, m, scale, bound, row):
    """Compile-time dispatch on the row's dtype (see the overload below)."""


@overload(_sincos_to_typed, inline="always")
def _ov_sincos_to_typed(args, m, scale, bound, row):
    if row.dtype == types.float32:
        return lambda args, m, scale, bound, row: _sincos_to_f32(args, m, scale, bound, row)
    return lambda args, m, scale, bound, row: _sincos_core(args, m, scale,
                                                           bound <= FAST_TRIG_MAX, row)


# Fused projection + cosine: each thread takes blocks of GEMM_BLOCK rows, lets a
# single-threaded BLAS (numba's np.dot; the caller limits BLAS to 1 thread)
# write their arguments, and takes the cosine while the block is still in its
# cache: one pass over the output in memory instead of two (measured 21%
# faster at N=100000, d=8, D=1024; equal at d=512).
GEMM_BLOCK = 64


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def gemm_cos_offset(X, W, offset, scale, arg_bound, out):
    """out = scale * cos(X @ W + offset); the ``rff`` map, fused by row blocks."""
    n = X.shape[0]
    for b in prange((n + GEMM_BLOCK - 1) // GEMM_BLOCK):
        i0 = b * GEMM_BLOCK
        i1 = min(n, i0 + GEMM_BLOCK)
        np.dot(X[i0:i1], W, out[i0:i1])
        for i in range(i0, i1):
            _cos_row_typed(out[i], offset, scale, arg_bound[i])


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def gemm_sincos(X, W, scale, arg_bound, out):
    """out = scale * [cos(X @ W), sin(X @ W)]; the pair map, fused by row blocks."""
    n = X.shape[0]
    m = W.shape[1]
    for b in prange((n + GEMM_BLOCK - 1) // GEMM_BLOCK):
        i0 = b * GEMM_BLOCK
        i1 = min(n, i0 + GEMM_BLOCK)
        args = np.empty((i1 - i0, m), dtype=X.dtype)
        np.dot(X[i0:i1], W, args)
        for i in range(i0, i1):
            _sincos_to_typed(args[i - i0], m, scale, arg_bound[i], out[i])


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def cos_offset_scale_inplace(Z, offset, scale, arg_bound):
    """Z[i, j] <- scale * cos(Z[i, j] + offset[j]); Z (n, D) holds X @ W.

    The ``rff`` map (Rahimi & Recht Algorithm 1): z(x) = sqrt(2/D) cos(W x + b).
    ``arg_bound[i]`` bounds |argument| on row i (see ``trig_arg_bound``); rows
    above ``FAST_TRIG_MAX`` use libm.  float32 rows are computed in float32
    (float64 above ``FAST_TRIG_MAX_F32``).
    """
    for i in prange(Z.shape[0]):
        _cos_row_typed(Z[i], offset, scale, arg_bound[i])


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def sincos_pairs_inplace(Z, m, scale, arg_bound):
    """Z[:, :m] holds X @ W; overwrite with scale*[cos(XW), sin(XW)] (D = 2m).

    The ``rff_pairs`` map: z(x) = sqrt(2/D) [cos(W x), sin(W x)].  The row is its
    own argument array: each argument is read before its slot is written.
    """
    for i in prange(Z.shape[0]):
        _sincos_to_typed(Z[i], m, scale, arg_bound[i], Z[i])


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def scale_inplace(Z, scale):
    """Z *= scale: one streaming pass, the reference cost of touching the output."""
    n, m = Z.shape
    for i in prange(n):
        for j in range(m):
            Z[i, j] = scale * Z[i, j]


# --------------------------------------------------------------------------
# exact Gram matrices
# --------------------------------------------------------------------------
# A Gram matrix is a distance-like quantity s(x, y) followed by a profile
# f(s).  Distances: squared Euclidean (direct loop, or from a GEMM), L1, or
# the Cauchy product (already the kernel value).  Profiles (integer codes,
# branch taken once per row, outside the vectorised loop):
PROFILE_NONE = 0  # k = s
PROFILE_EXP = 1  # k = exp(-a s)                      gaussian (s=d^2), laplacian (s=L1)
PROFILE_EXP_SQRT = 2  # k = exp(-a sqrt(s))          matern 0.5 (s = d^2, a = 1/l)
PROFILE_MATERN15 = 3  # t = a sqrt(s): (1+t) exp(-t)           a = sqrt(3)/l
PROFILE_MATERN25 = 4  # t = a sqrt(s): (1+t+t^2/3) exp(-t)     a = sqrt(5)/l
#: beyond this t, exp(-t) is 0 in float64 and the Matern polynomial must not reach inf
MATERN_T_MAX = 800.0


def _like(row, v):
    """v in the precision of the row (float32 rows: float32)."""


@overload(_like)
def _ov_like(row, v):
    if row.dtype == types.float32:
        return lambda row, v: F32(v)
    return lambda row, v: np.float64(v)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _profile_row(row, profile, a):
    """row <- f(row) in the row's precision (float32 rows: float32 exp, 8 lanes)."""
    m = row.shape[0]
    na = _like(row, -a)
    one = _like(row, 1.0)
    if profile == PROFILE_EXP:
        for j in range(m):
            row[j] = _exp_typed(na * row[j])
    elif profile == PROFILE_EXP_SQRT:
        for j in range(m):
            row[j] = _exp_typed(na * np.sqrt(row[j]))
    elif profile == PROFILE_MATERN15:  # t capped where exp(-t) is 0: no inf * 0
        cap = _like(row, MATERN_T_MAX)
        for j in range(m):
            t = min(-na * np.sqrt(row[j]), cap)
            row[j] = (one + t) * _exp_typed(-t)
    elif profile == PROFILE_MATERN25:
        cap = _like(row, MATERN_T_MAX)
        three = _like(row, 3.0)
        for j in range(m):
            t = min(-na * np.sqrt(row[j]), cap)
            row[j] = (one + t + t * t / three) * _exp_typed(-t)


#: coordinate_gram's kernels: how a coordinate's term enters out[i, j]
SQDIST, L1DIST, CAUCHY, ADDITIVE_CHI2, SECH = 0, 1, 2, 3, 4


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _coordinate_row(x, Yt, j0, row, kind, profile, a):
    """row[j] <- k(x, y_{j0 + j}) accumulated coordinate by coordinate, the inner loop over
    j (vectorised): exact (no cancellation).  Yt = Y.T (d, m), C-contiguous."""
    d = x.shape[0]
    m = row.shape[0]
    product = kind == CAUCHY or kind == SECH
    for j in range(m):
        row[j] = 1.0 if product else 0.0
    for k in range(d):
        xk = x[k]
        yk = Yt[k, j0:j0 + m]
        if kind == SQDIST:
            for j in range(m):
                t = xk - yk[j]
                row[j] += t * t
        elif kind == L1DIST:
            for j in range(m):
                row[j] += abs(xk - yk[j])
        elif kind == CAUCHY:
            for j in range(m):
                t = xk - yk[j]
                row[j] = row[j] / (1.0 + t * t * a)
        elif kind == ADDITIVE_CHI2:
            x64 = np.float64(xk)
            for j in range(m):
                s = x64 + yk[j]
                if s > 0.0:
                    row[j] += 2.0 * x64 * yk[j] / s
        else:  # sech t = 2 e^-|t| / (1 + e^-2|t|): one vectorised exp, no overflow
            x64 = np.float64(xk)
            for j in range(m):
                e = fast_exp_scalar(-abs(a * (x64 - yk[j])))
                row[j] = row[j] * (2.0 * e / (1.0 + e * e))
    if kind == SQDIST or kind == L1DIST:
        _profile_row(row, profile, a)
    elif kind == ADDITIVE_CHI2:
        for j in range(m):
            row[j] *= a


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def coordinate_gram(X, Yt, out, kind, profile, a):
    """A Gram accumulated coordinate by coordinate (``_coordinate_row``), one output row
    per parallel iteration: exact (no cancellation), best for small d.  Yt = Y.T (d, m)
    C-contiguous.  ``kind``:

    * SQDIST: f(||x - y||^2), f = the ``profile`` with parameter ``a``;
    * L1DIST: f(||x - y||_1);
    * CAUCHY: prod_k 1 / (1 + (x_k - y_k)^2 a);
    * ADDITIVE_CHI2: a sum_k 2 x_k y_k / (x_k + y_k) (a term is 0 where x_k + y_k = 0);
    * SECH: prod_k 1 / cosh(a (x_k - y_k)) (skewed chi2 in log coordinates).
    """
    for i in prange(X.shape[0]):
        _coordinate_row(X[i], Yt, 0, out[i], kind, profile, a)


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _sqdist_profile_row(row, xsq, ysq, profile, a):
    """row holds x.y for one x; overwrite with f(max(|x|^2 + |y|^2 - 2 x.y, 0))."""
    two = _like(row, 2.0)
    zero = _like(row, 0.0)
    for j in range(row.shape[0]):
        row[j] = max(xsq + ysq[j] - two * row[j], zero)
    _profile_row(row, profile, a)


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def sqdist_from_gemm_profile(G, xsq, ysq, profile, a):
    """G holds X @ Y.T; overwrite with f(max(|x|^2 + |y|^2 - 2 x.y, 0))."""
    for i in prange(G.shape[0]):
        _sqdist_profile_row(G[i], xsq[i], ysq, profile, a)


# --------------------------------------------------------------------------
# reductions for the approximation and bounds measurements
# --------------------------------------------------------------------------
@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def abs_max_sum_sq(E):
    """(max |E|, sum |E|, sum E^2) of a 2-d float64 array, per-row partials."""
    n, m = E.shape
    mx = np.zeros(n)
    sa = np.zeros(n)
    s2 = np.zeros(n)
    for i in prange(n):
        a_max = 0.0
        a_sum = 0.0
        a_sq = 0.0
        for j in range(m):
            v = E[i, j]
            a_max = max(a_max, abs(v))
            a_sum += abs(v)
            a_sq += v * v
        mx[i] = a_max
        sa[i] = a_sum
        s2[i] = a_sq
    return mx.max(), sa.sum(), s2.sum()


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def max_abs_diff_upper(G, K):
    """max_{i <= j} |G[i, j] - K[i, j]| over the upper triangle (diagonal included).

    G and K are square and symmetric (G = Z Z^T, K the exact Gram), so the
    upper triangle is every pair once; G may be float32, the difference is
    taken in float64.
    """
    n = G.shape[0]
    mx = np.zeros(n)
    for i in prange(n):
        a_max = 0.0
        for j in range(i, n):
            a_max = max(a_max, abs(np.float64(G[i, j]) - K[i, j]))
        mx[i] = a_max
    return mx.max()


# --------------------------------------------------------------------------
# structured projections (sorf, fastfood): fast Walsh-Hadamard transform
# --------------------------------------------------------------------------
#: rows transformed together by the structured projections: the FWHT then works
#: on (L, ROW_BLOCK) tiles, every butterfly a SIMD operation across rows
#: whatever the stride h (measured: 4 rows 1.6-2x faster than one row at a time
#: or 8-16 rows, whose tiles leave L1 for L = 1024).
ROW_BLOCK = 4


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _fwht_cols(V):
    """Unnormalised Walsh-Hadamard transform of every column of V (L, r) in place.

    Two butterfly levels (h and 2h) per sweep over V, in registers: each element is
    loaded and stored once per two levels instead of once per level (the butterflies
    are load/store-bound in L1, not flop-bound).  The additions are those of the
    radix-2 order, so the result is bitwise the same; an odd last level is radix-2."""
    L, r = V.shape
    h = 1
    while 2 * h < L:
        for i in range(0, L, 4 * h):
            for j in range(i, i + h):
                for t in range(r):
                    a = V[j, t]
                    b = V[j + h, t]
                    c = V[j + 2 * h, t]
                    d = V[j + 3 * h, t]
                    s0 = a + b
                    s1 = a - b
                    s2 = c + d
                    s3 = c - d
                    V[j, t] = s0 + s2
                    V[j + h, t] = s1 + s3
                    V[j + 2 * h, t] = s0 - s2
                    V[j + 3 * h, t] = s1 - s3
        h *= 4
    if h < L:
        for j in range(h):
            for t in range(r):
                x = V[j, t]
                y = V[j + h, t]
                V[j, t] = x + y
                V[j + h, t] = x - y


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fwht_columns(V):
    """Each column of V (L, r), L a power of 2, <- H column (unnormalised, the
    Sylvester order of scipy.linalg.hadamard); column blocks in parallel."""
    r = V.shape[1]
    for c in prange((r + ROW_BLOCK - 1) // ROW_BLOCK):
        _fwht_cols(V[:, c * ROW_BLOCK:min(r, (c + 1) * ROW_BLOCK)])


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fwht_tiles_repeat(V, reps):
    """Each tile V[t] (V: (T, L, r), tiles contiguous as in the structured maps) <- H^reps
    V[t], in place, tiles in parallel: the in-cache FWHT rate that the speed
    measurement counts the structured maps' limit in (H H = L I)."""
    T, L, r = V.shape
    for t in prange(T):
        W = np.empty((L, r))  # a contiguous local tile, as sorf_project / fastfood_project
        for k in range(L):
            for j in range(r):
                W[k, j] = V[t, k, j]
        for _ in range(reps):
            _fwht_cols(W)
        for k in range(L):
            for j in range(r):
                V[t, k, j] = W[k, j]


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _load_tile(X, i0, r, sign, V):
    """V[:, t] <- x_(i0+t) * sign, zero-padded to L rows (and zero columns past r)."""
    d = X.shape[1]
    L, R = V.shape
    for k in range(d):
        s = sign[k]
        for t in range(r):
            V[k, t] = X[i0 + t, k] * s
        for t in range(r, R):
            V[k, t] = 0.0
    for k in range(d, L):
        for t in range(R):
            V[k, t] = 0.0


@nb.njit(inline="always", cache=True, fastmath=FMA)
def _store_tile(V, i0, r, base, scale, rowscale, out):
    """out[i0+t, base+k] = scale * rowscale[k] * V[k, t] for the columns that exist."""
    L = V.shape[0]
    for k in range(min(L, out.shape[1] - base)):
        s = scale * rowscale[k]
        for t in range(r):
            out[i0 + t, base + k] = s * V[k, t]


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def sorf_project(X, D1, D2, D3, scale, out):
    """out[i, b*L + k] = scale * (H D1[b] H D2[b] H D3[b] x_i)[k], x_i zero-padded
    to L; only the first out.shape[1] columns are written (last block truncated).
    H unnormalised: the caller folds L^{-3/2} into ``scale``."""
    n = X.shape[0]
    B, L = D1.shape
    ones = np.ones(L)
    for ib in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        i0 = ib * ROW_BLOCK
        r = min(ROW_BLOCK, n - i0)
        V = np.empty((L, ROW_BLOCK))
        for b in range(B):
            _load_tile(X, i0, r, D3[b], V)
            _fwht_cols(V)
            for k in range(L):
                s = D2[b, k]
                for t in range(ROW_BLOCK):
                    V[k, t] *= s
            _fwht_cols(V)
            for k in range(L):
                s = D1[b, k]
                for t in range(ROW_BLOCK):
                    V[k, t] *= s
            _fwht_cols(V)
            _store_tile(V, i0, r, b * L, scale, ones, out)


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def fastfood_project(X, Bsign, Perm, G, S, scale, out):
    """out[i, b*L + k] = scale * (S[b] H G[b] Perm[b] H Bsign[b] x_i)[k], x_i
    zero-padded to L, permutation as v2[k] = v[Perm[b, k]]; first out.shape[1]
    columns written."""
    n = X.shape[0]
    B, L = G.shape
    for ib in prange((n + ROW_BLOCK - 1) // ROW_BLOCK):
        i0 = ib * ROW_BLOCK
        r = min(ROW_BLOCK, n - i0)
        V = np.empty((L, ROW_BLOCK))
        W = np.empty((L, ROW_BLOCK))
        for b in range(B):
            _load_tile(X, i0, r, Bsign[b], V)
            _fwht_cols(V)
            for k in range(L):
                src = Perm[b, k]
                g = G[b, k]
                for t in range(ROW_BLOCK):
                    W[k, t] = V[src, t] * g
            _fwht_cols(W)
            _store_tile(W, i0, r, b * L, scale, S[b], out)


# --------------------------------------------------------------------------
# random binning (hashing of bin indices)
# --------------------------------------------------------------------------
@nb.njit(parallel=True, nogil=True, cache=True)
def binning_keys(X, pitch, shift, mult, keys):
    """keys[i, p] = hash of the bin of x_i in grid p: sum_j mult[j] *
    floor((x_ij - shift[p, j]) / pitch[p, j]) in wrapping uint64 arithmetic
    (random odd multipliers; collisions have probability ~ n^2 / 2^64)."""
    n, d = X.shape
    P = pitch.shape[0]
    for i in prange(n):
        for p in range(P):
            h = np.uint64(0)
            for j in range(d):
                c = np.int64(math.floor((np.float64(X[i, j]) - shift[p, j]) / pitch[p, j]))
                h += mult[j] * np.uint64(c)
            keys[i, p] = h


# --------------------------------------------------------------------------
# dot-product kernels (not shift-invariant): profile of x.y, |x|, |y|
# --------------------------------------------------------------------------
DOT_ARCCOS0 = 0  # k = 1 - theta / pi                                   (0 if x or y = 0)
DOT_ARCCOS1 = 1  # k = |x||y| (sin theta + (pi - theta) cos theta) / pi
DOT_POLY = 2  # k = (a x.y + b)^p


@nb.njit(inline="always", cache=True)
def _dot_profile_row(row, xn, yn, profile, a, b, p):
    """row holds x.y for one x (norm/l ``xn``); overwrite with the kernel value."""
    m = row.shape[0]
    if profile == DOT_POLY:
        if p == 2.0:  # the default degree, and 3 and 4, by multiplications (vectorised)
            for j in range(m):
                t = a * np.float64(row[j]) + b
                row[j] = t * t
        elif p == 3.0:
            for j in range(m):
                t = a * np.float64(row[j]) + b
                row[j] = t * t * t
        elif p == 4.0:
            for j in range(m):
                t = a * np.float64(row[j]) + b
                t = t * t
                row[j] = t * t
        else:
            for j in range(m):
                row[j] = (a * np.float64(row[j]) + b) ** p
        return
    for j in range(m):
        nn = xn * yn[j]
        if nn == 0.0:
            row[j] = 0.0
            continue
        c = min(1.0, max(-1.0, a * np.float64(row[j]) / nn))
        theta = math.acos(c)
        if profile == DOT_ARCCOS0:
            row[j] = 1.0 - theta * INV_PI
        else:
            row[j] = nn * (math.sqrt(max(0.0, 1.0 - c * c)) + (math.pi - theta) * c) * INV_PI


@nb.njit(parallel=True, nogil=True, cache=True)
def dot_profile_inplace(G, xn, yn, profile, a, b, p):
    """G holds X @ Y.T; overwrite with the kernel value.  Arc-cosine: xn, yn are the norms
    of X / l and Y / l and a = 1 / l^2 (so a G = (x / l).(y / l)); polynomial: (a G + b)^p."""
    for i in prange(G.shape[0]):
        _dot_profile_row(G[i], xn[i], yn, profile, a, b, p)


# --------------------------------------------------------------------------
# kernel-times-matrix products: K(X, Y) V with K never in memory
# --------------------------------------------------------------------------
# One T x T tile of K at a time, per thread, in its cache: the distances (or dot
# products) by a single-threaded BLAS GEMM of the tile (numba's np.dot; the caller
# limits BLAS to one thread) or by the exact coordinate loop, the kernel's profile
# applied in place, then multiplied into V while the tile is in cache.  Rows are
# padded to a multiple of T (padding rows of V are 0, padded outputs are dropped).
#: how a tile's kernel values are made: a GEMM of the tile then the squared-distance
#: profile; a GEMM then the dot-product profile (arc-cosine, polynomial); the
#: coordinate loop (``_coordinate_row``: exact distances, L1, Cauchy, chi2, sech)
TILE_SQDIST, TILE_DOT, TILE_COORD = 0, 1, 2
#: rows (and columns) of one tile of the kernel products: a float64 tile is 512 KiB,
#: within one core's L2 (1.25 MiB here) with its rows of X and Y
KERNEL_TILE = 256


@nb.njit(inline="always", cache=True)
def _kernel_tile(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p):
    """K <- K(X[i0:i0+T], Y[j0:j0+T]) for the kernel described by (tile, kind, profile,
    a, b, p), through the work tile G of X's precision (K may be G, or a float64 tile:
    mixed precision); xaux / yaux: squared norms (TILE_SQDIST) or norms / l (TILE_DOT)."""
    T = G.shape[0]
    if tile == TILE_COORD:
        for r in range(T):
            _coordinate_row(X[i0 + r], Yt, j0, G[r], kind, profile, a)
    else:
        np.dot(X[i0:i0 + T], Y[j0:j0 + T].T, G)
        ya = yaux[j0:j0 + T]
        if tile == TILE_SQDIST:
            for r in range(T):
                _sqdist_profile_row(G[r], xaux[i0 + r], ya, profile, a)
        else:
            for r in range(T):
                _dot_profile_row(G[r], xaux[i0 + r], ya, profile, a, b, p)
    if K is not G:  # in place, then widened (measured faster than writing float64 rows)
        for r in range(T):
            for j in range(T):
                K[r, j] = G[r, j]


def _float64_tile(G):
    """Where a tile's float64 values go: G itself, or a new float64 array for a float32 G."""


@overload(_float64_tile)
def _ov_float64_tile(G):
    if G.dtype == types.float32:
        return lambda G: np.empty(G.shape)
    return lambda G: G


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def kernel_times(X, Y, Yt, xaux, yaux, V, parts, ti, tj, starts, symmetric,
                 tile, kind, profile, a, b, p):
    """parts[c] += K V by tiles: tile pairs (ti[t], tj[t]) for t in [starts[c], starts[c+1])
    are chunk c's, chunks run in parallel.  V (ny, m) float64, parts (chunks or 1, nx, m)
    float64 zeros.  ``symmetric`` (Y is X, pairs I <= J): each tile serves both
    out[I] += K[I, J] V[J] and out[J] += K[I, J]^T V[I] (a diagonal tile only the first),
    each chunk into its own parts[c] (no two threads write one row); else each chunk owns
    whole row tiles, all into parts[0].  The products of a tile with V are BLAS GEMMs of
    the tile while it is in cache.  The chunking depends only on the shapes, so the sum
    of the parts is the same whatever the number of threads."""
    T = KERNEL_TILE
    m = V.shape[1]
    for c in prange(starts.shape[0] - 1):
        G = np.empty((T, T), X.dtype)
        tmp = np.empty((T, m))
        K = _float64_tile(G)
        out = parts[c] if symmetric else parts[0]
        for t in range(starts[c], starts[c + 1]):
            i0 = ti[t] * T
            j0 = tj[t] * T
            _kernel_tile(X, Y, Yt, xaux, yaux, i0, j0, G, K, tile, kind, profile, a, b, p)
            np.dot(K, V[j0:j0 + T], tmp)
            out[i0:i0 + T] += tmp
            if symmetric and i0 != j0:
                np.dot(K.T, V[i0:i0 + T], tmp)
                out[j0:j0 + T] += tmp


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def kernel_gram_tiles(X, Y, Yt, xaux, yaux, out, tile, kind, profile, a, b, p):
    """out <- K(X, Y)[:out.shape[0], :out.shape[1]] through the same tiles as
    ``kernel_times`` (X, Y padded to multiples of KERNEL_TILE rows)."""
    T = KERNEL_TILE
    n, m = out.shape
    nj = Y.shape[0] // T
    for I in prange(X.shape[0] // T):
        G = np.empty((T, T), X.dtype)
        i0 = I * T
        for J in range(nj):
            j0 = J * T
            _kernel_tile(X, Y, Yt, xaux, yaux, i0, j0, G, G, tile, kind, profile, a, b, p)
            for r in range(min(T, n - i0)):
                for j in range(min(T, m - j0)):
                    out[i0 + r, j0 + j] = G[r, j]


# --------------------------------------------------------------------------
# feature passes of the non-trigonometric maps (in place on X @ W)
# --------------------------------------------------------------------------
@nb.njit(parallel=True, nogil=True, cache=True)
def arccos_features_inplace(Z, order, scale, zero_below):
    """Z <- scale * step(Z) (order 0) or scale * max(Z, 0) (order 1), step(0) = 1/2: the
    midpoint, so that step(t) + step(-t) = 1 for every t (it matters only for directions
    with atoms, e.g. a Gauss-Hermite grid, where w.x = 0 has positive probability).  Order 0:
    |Z[i, j]| <= zero_below[i] counts as 0 (zero_below empty: none)."""
    n, m = Z.shape
    tol = zero_below.shape[0] > 0
    for i in prange(n):
        row = Z[i]
        if order == 0:
            lim = zero_below[i] if tol else 0.0
            for j in range(m):
                v = row[j]
                row[j] = 0.5 * scale if abs(v) <= lim else (scale if v > 0 else 0.0)
        else:
            for j in range(m):
                row[j] = scale * row[j] if row[j] > 0 else 0.0


@nb.njit(parallel=True, nogil=True, cache=True, fastmath=FMA)
def positive_features_inplace(Z, shift, scale):
    """Z[i, j] <- scale * exp(Z[i, j] - shift[i]) (positive random features; the argument
    can be positive: fast_exp_full_scalar, vectorised)."""
    n, m = Z.shape
    for i in prange(n):
        row = Z[i]
        s = np.float64(shift[i])
        for j in range(m):
            row[j] = scale * fast_exp_full_scalar(np.float64(row[j]) - s)


@nb.njit(parallel=True, nogil=True, cache=True)
def group_products(P, start, count, weight, out):
    """out[i, f] = weight[f] * prod_{j < count[f]} P[i, start[f] + j] (Random Maclaurin:
    a product of count[f] Rademacher projections; count 0 gives the constant weight)."""
    n = P.shape[0]
    D = out.shape[1]
    for i in prange(n):
        for f in range(D):
            v = np.float64(weight[f])
            s = start[f]
            for j in range(count[f]):
                v *= P[i, s + j]
            out[i, f] = v


@nb.njit(parallel=True, nogil=True, cache=True)
def count_sketches(X, hashes, signs, out):
    """out[t, i, :] = count sketch t of row i: out[t, i, hashes[t, k]] += signs[t, k] X[i, k]."""
    T, n, D = out.shape
    d = X.shape[1]
    for i in prange(n):
        for t in range(T):
            row = out[t, i]
            for j in range(D):
                row[j] = 0.0
            for k in range(d):
                row[hashes[t, k]] += signs[t, k] * X[i, k]


@nb.njit(parallel=True, nogil=True, cache=True)
def scale_columns_inplace(Z, s):
    """Z[i, j] *= s[j] (per-feature weights, e.g. quadrature weights)."""
    n, m = Z.shape
    for i in prange(n):
        row = Z[i]
        for j in range(m):
            row[j] = row[j] * s[j]


# --------------------------------------------------------------------------
# chi-squared kernels (non-negative data)
# --------------------------------------------------------------------------
