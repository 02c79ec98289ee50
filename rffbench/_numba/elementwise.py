"""Elementwise functions that vectorise: cosine, sine and exponential by hand.

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
* exponential (for arguments <= 0, all kernels need): reduction by ln 2 with k
  rounded by a shifter (x / ln2 + 1.5 * 2**52 holds round(x / ln2) in its low bits,
  which also make 2**k's exponent field: no floor, no conversion), then
  1 + r + r^2 Q(r) on |r| <= ln2/2, Q of degree 9 interpolating (exp(r) - 1 - r) / r^2
  at its 10 Chebyshev points (60 digits, mpmath: 1.7e-17 relative), scaling by 2**k
  through the exponent bits.  Within 1 ulp of numpy's exp (tested); exp(x) for
  x < -708 returns 0 (true value < 3e-308).  19 vector operations per 8 values
  against 24 for the degree-13 Taylor polynomial and floor it replaced (0.64 -> 0.50
  ns per value, one thread, AVX-512).  ``fast_exp_full_scalar``: any argument (the positive
  map's), 2**k applied as two factors, so it overflows to inf and underflows
  gradually exactly where libm's does.  ``fast_exp_f32_scalar``: float32, degree 7
  (1.3 float32 ulp), 8 lanes per AVX2 vector, for the mixed-precision kernel tiles.
* arc-cosine (the arc-cosine kernels' exact Gram): acos(c) = pi/2 - asin(c) for
  |c| <= 1/2, 2 asin(sqrt((1 - |c|) / 2)) above (pi minus it below -1/2), asin by a
  degree-12 polynomial in c^2 fitted at 60 digits; branch-free (selects), so a row
  vectorises; within 1 ulp of numpy's acos over [-1, 1] (tested, with the approach to
  +-1).

* ``wide_vectors()``: called at the top of a compiled function, lets LLVM vectorise its
  loops with 512-bit vectors on AVX-512 CPUs (8 float64 lanes; LLVM's tuning otherwise
  stops at 256 bits).  The exact products' tiles and the rff map's cosine blocks call it.

float32 arrays are computed in float64 internally and rounded once on store, except
the float32 trigonometric rows and exponential (their own reductions below).  The
row helpers dispatch on the row's dtype when numba types them (overloads), so a
float64 caller compiles only the float64 code.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic, overload

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
    """An intrinsic reinterpreting the bits of a ``src`` number as a ``dst`` number of the
    same width (a vectorisable bit-cast: how 2**k enters the exponent field)."""

    @intrinsic
    def cast(typingctx, x):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], llvm_type)

        return dst(src), codegen

    return cast


@intrinsic
def wide_vectors(typingctx):
    """Let LLVM vectorise the calling function's loops with the widest vectors the CPU has.

    LLVM's x86 tuning prefers 256-bit vectors on every AVX-512 CPU it knows (a guard
    against the clock drop of Skylake-era chips), so without this the loops run 4
    float64 lanes where the machine has 8.  The call sets the function attribute
    "prefer-vector-width"="512" on the function being compiled (the one whose body
    holds the call, after numba's inlining); loops that LLVM inlines into a caller
    follow the caller's attribute, so each compiled function on a hot path calls it.
    On a CPU without AVX-512 it changes nothing.  (llvmlite's attribute set accepts
    only flag attributes by name, hence the plain set.add of the key-value string; an
    llvmlite whose attributes are not a set gets no attribute: 256-bit vectors, the same
    values.)"""
    def codegen(context, builder, signature, args):
        attributes = builder.function.attributes
        if isinstance(attributes, set):
            set.add(attributes, '"prefer-vector-width"="512"')
        return context.get_dummy_value()

    return types.none(), codegen


_i64_as_f64 = _bitcast(nb.types.int64, nb.types.float64, ir.DoubleType())
_f64_as_i64 = _bitcast(nb.types.float64, nb.types.int64, ir.IntType(64))
_i32_as_f32 = _bitcast(nb.types.int32, nb.types.float32, ir.FloatType())


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _reduce_pi(x):
    """x = k*pi + r, |r| <= pi/2; returns (r, sign) with sign = (-1)**k."""
    k = np.floor(x * INV_PI + 0.5)
    r = ((x - k * PI_A) - k * PI_B) - k * PI_C
    parity = k - 2.0 * np.floor(k * 0.5)
    return r, 1.0 - 2.0 * parity


#: Taylor coefficients, highest power first: cos(r) = sum_n (-1)^n z^n / (2n)!, z = r^2,
#: through n = 10; sin(r) = r + r sum_{n>=1} (-1)^n z^n / (2n+1)!, through n = 10
COS_TAYLOR = (4.1103176233121648e-19, -1.5619206968586225e-16, 4.7794773323873853e-14,
              -1.1470745597729725e-11, 2.08767569878681e-09, -2.7557319223985888e-07,
              2.4801587301587302e-05, -0.0013888888888888889, 0.041666666666666664, -0.5, 1.0)
SIN_TAYLOR = (1.9572941063391263e-20, -8.2206352466243295e-18, 2.8114572543455206e-15,
              -7.6471637318198164e-13, 1.6059043836821613e-10, -2.505210838544172e-08,
              2.7557319223985893e-06, -0.00019841269841269841, 0.0083333333333333332,
              -0.16666666666666666, 0.0)
#: exp(r) = 1 + r + r^2 Q(r) on |r| <= ln2 / 2: Q of degree 9 interpolating
#: (exp(r) - 1 - r) / r^2 at its 10 Chebyshev points, solved at 60 digits with mpmath
#: (relative error of the exact polynomial 1.7e-17; highest degree first)
EXP_Q = (2.5100375832561234e-08, 2.7620075879983367e-07, 2.7557268480310024e-06,
         2.4801521322368692e-05, 0.00019841269863040545, 0.0013888888917196719,
         0.008333333333330065, 0.041666666666624164, 0.16666666666666669,
         0.5000000000000001)
#: 1.5 * 2**52: x + EXP_SHIFT rounds x to an integer held in the sum's low mantissa bits
#: (for |x| < 2**51); those bits plus EXP_BIAS, shifted by 52, are 2**k's exponent field
EXP_SHIFT = 6755399441055744.0
EXP_SHIFT_BITS = int(np.array(EXP_SHIFT).view(np.int64))
EXP_BIAS = 1023 - EXP_SHIFT_BITS


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _horner(z, c):
    """sum_k c[k] z^(n-1-k) by Horner's rule (c: a constant tuple; unrolled by LLVM)."""
    p = c[0]
    for k in range(1, len(c)):
        p = p * z + c[k]
    return p


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _cos_poly(z):
    return _horner(z, COS_TAYLOR)


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _sin_poly(r, z):
    return r + r * (_horner(z, SIN_TAYLOR))


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def fast_cos_scalar(x):
    r, sign = _reduce_pi(x)
    return sign * _cos_poly(r * r)


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def fast_sin_scalar(x):
    r, sign = _reduce_pi(x)
    return sign * _sin_poly(r, r * r)


#: asin(t) = t + t z Q(z), z = t^2 <= 1/4: Q of degree 12 interpolating (asin(t) - t) / (t z)
#: at the 13 Chebyshev points of [0, 1/4] (computed at 60 digits with mpmath; highest
#: degree first): the acos below is within ~1 ulp of the correctly rounded value over
#: [-1, 1] (tests/_numba/test_elementwise.py checks <= 2 ulp against numpy at 10^6 points
#: and near +-1)
ASIN_Q = (0.028757851367421566, -0.014851887071247204, 0.01740087944269402,
          0.005457506718640358, 0.01032281435018578, 0.011479177415184906,
          0.013971212973552933, 0.017352392720869973, 0.02237217294214989,
          0.030381944138531247, 0.04464285714635543, 0.07499999999998433,
          0.16666666666666669)
#: pi/2 in two parts (the first correctly rounded, the second its remainder)
PIO2_HI = 1.5707963267948966
PIO2_LO = 6.123233995736766e-17


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def fast_acos_scalar(c):
    """acos(c) for c in [-1, 1], branch-free so that loops over it vectorise (libm's acos is
    a scalar call): |c| <= 1/2, pi/2 - asin(c); |c| > 1/2, 2 asin(sqrt((1 - |c|) / 2)) (and
    pi minus it for c < 0), with z = (1 - |c|) / 2 exact (Sterbenz) so that no accuracy is
    lost as |c| -> 1."""
    ax = abs(c)
    big = ax > 0.5
    z = (1.0 - ax) * 0.5 if big else c * c
    s = np.sqrt(z)
    p = z * _horner(z, ASIN_Q)
    t = s + s * p
    small = PIO2_HI - (c - (PIO2_LO - c * p))
    large = 2.0 * t if c > 0.0 else 2.0 * (PIO2_HI - (t - PIO2_LO))
    return large if big else small


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fast_acos(x, out):
    """out <- acos(x) elementwise (x in [-1, 1]; 1-d float64)."""
    for i in prange(x.shape[0]):
        out[i] = fast_acos_scalar(x[i])


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _exp_reduce(x):
    """x = k ln2 + r, |r| <= ln2 / 2: (exp(r), kd) where kd = x / ln2 + EXP_SHIFT holds
    k in its low bits (k = kd - EXP_SHIFT exactly)."""
    kd = x * LN2_INV + EXP_SHIFT
    k = kd - EXP_SHIFT
    r = (x - k * LN2_HI) - k * LN2_LO
    return 1.0 + r + (r * r) * _horner(r, EXP_Q), kd


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def fast_exp_bounded_scalar(x):
    """exp(x) for |x| <= -EXP_MIN_ARG (2**k is then a normal number): no select, for
    arguments bounded beforehand (the exponential dot product's tiles, by the norms)."""
    p, kd = _exp_reduce(x)
    return p * _i64_as_f64((_f64_as_i64(kd) + EXP_BIAS) << 52)


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def fast_exp_scalar(x):
    """exp(x) for x <= 0 (for x > 0 it is accurate up to x = 709); 0 below EXP_MIN_ARG
    and for NaN.  x is not clamped: below EXP_MIN_ARG the scale's bits are garbage and
    the select drops them."""
    return fast_exp_bounded_scalar(x) if x >= EXP_MIN_ARG else 0.0


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def fast_exp_upper_scalar(x):
    """exp(x) up to overflow, 0 below EXP_MIN_ARG (as fast_exp_scalar), inf above
    EXP_FULL_MAX, NaN kept: the exponential dot-product kernel's exp.  2**k as 2 times
    2**(k - 1) (both exact, so the product overflows exactly where exp does); no gradual
    underflow, so no second scale factor: 25 vector operations per 8 values against
    fast_exp_full_scalar's 34.  (2 p first: p 2**(k - 1) would be subnormal near -708.)"""
    p, kd = _exp_reduce(x)
    y = (p * 2.0) * _i64_as_f64((_f64_as_i64(kd) + (EXP_BIAS - 1)) << 52)
    y = 0.0 if x < EXP_MIN_ARG else y
    return np.inf if x > EXP_FULL_MAX else y


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fast_exp_upper(x, out):
    """out[i] = exp(x[i]) by fast_exp_upper_scalar (accuracy-test entry point)."""
    for i in prange(x.shape[0]):
        out[i] = fast_exp_upper_scalar(np.float64(x[i]))


#: float32 exponential: cephes' split of ln 2 (LN2_HI_F has 12 significant bits, so
#: k * LN2_HI_F is exact for |k| < 2**12), Taylor through r^7 on |r| <= ln2/2 (truncation
#: 5e-9, below float32's half-ulp 6e-8), 2**k through the exponent bits
LN2_INV_F = F32(1.0 / math.log(2.0))
LN2_HI_F = F32(0.693359375)
LN2_LO_F = F32(-2.12194440e-4)
EXP_MIN_ARG_F = F32(-87.0)  # exp(-87) = 1.6e-38, above float32's smallest normal
EXP_TAYLOR_F = tuple(F32(1.0 / math.factorial(n)) for n in range(7, -1, -1))


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
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


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def fast_exp_full_scalar(x):
    """exp(x) over float64's whole range, vectorisable: the reduction of fast_exp_scalar
    and 2**k applied as 2**(k//2) * 2**(k - k//2), both factors normal for |k| <= 1075,
    so large results do not overflow early and tiny ones go gradually subnormal.
    NaN gives NaN."""
    xc = min(max(x, EXP_FULL_MIN), EXP_FULL_MAX)
    p, kd = _exp_reduce(xc)
    ki = _f64_as_i64(kd) - EXP_SHIFT_BITS
    k1 = ki >> 1
    s1 = _i64_as_f64((k1 + 1023) << 52)
    s2 = _i64_as_f64((ki - k1 + 1023) << 52)
    y = (p * s1) * s2
    y = 0.0 if x < EXP_FULL_MIN else y
    y = np.inf if x > EXP_FULL_MAX else y
    return x + y if x != x else y


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fast_exp_full(x, out):
    """out[i] = exp(x[i]) for 1-d arrays, any float64 x (accuracy-test entry point)."""
    for i in prange(x.shape[0]):
        out[i] = fast_exp_full_scalar(np.float64(x[i]))


def exp_typed(x):
    """exp(x) (x <= 0) in the precision of x: float32 -> fast_exp_f32_scalar."""


@overload(exp_typed)
def _ov_exp_typed(x):
    if x == types.float32:
        return lambda x: fast_exp_f32_scalar(x)
    return lambda x: fast_exp_scalar(x)


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fast_exp_f32(x, out):
    """out[i] = exp(x[i]) for 1-d float32 arrays with x <= 0 (accuracy-test entry point)."""
    for i in prange(x.shape[0]):
        out[i] = fast_exp_f32_scalar(x[i])


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fast_cos(x, out):
    """out[i] = cos(x[i]) for 1-d arrays (the accuracy-test entry point)."""
    for i in prange(x.shape[0]):
        out[i] = fast_cos_scalar(np.float64(x[i]))


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fast_sin(x, out):
    """out[i] = sin(x[i]) for 1-d arrays."""
    for i in prange(x.shape[0]):
        out[i] = fast_sin_scalar(np.float64(x[i]))


@nb.njit(parallel=True, nogil=True, cache=True, error_model="numpy", fastmath=FMA)
def fast_exp(x, out):
    """out[i] = exp(x[i]) for 1-d arrays with x <= 0."""
    for i in prange(x.shape[0]):
        out[i] = fast_exp_scalar(np.float64(x[i]))


# --------------------------------------------------------------------------
# rows of cosines and sines (the Fourier maps' passes), by the row's dtype
# --------------------------------------------------------------------------
@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _cos_row(row, offset, scale, fast):
    """row[j] <- scale * cos(row[j] + offset[j]); libm unless ``fast``."""
    m = row.shape[0]
    if fast:
        for j in range(m):
            row[j] = scale * fast_cos_scalar(np.float64(row[j]) + offset[j])
    else:
        for j in range(m):
            row[j] = scale * math.cos(np.float64(row[j]) + offset[j])


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
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


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _reduce_pi_f32(x):
    k = np.floor(x * INV_PI_F + HALF_F)
    r = ((x - k * PI_A_F) - k * PI_B_F) - k * PI_C_F
    parity = k - TWO_F * np.floor(k * HALF_F)
    return r, ONE_F - TWO_F * parity


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _cos_poly_f32(z):
    p = C12 * z + C10
    p = p * z + C8
    p = p * z + C6
    p = p * z + C4
    p = p * z + C2
    return p * z + C0


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _sin_poly_f32(r, z):
    p = S13 * z + S11
    p = p * z + S9
    p = p * z + S7
    p = p * z + S5
    p = p * z + S3
    return r + r * (p * z)


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
def _cos_row_f32(row, offset, scale, bound):
    """float32 row <- scale * cos(row + offset), in float32 below FAST_TRIG_MAX_F32."""
    if bound <= FAST_TRIG_MAX_F32:
        sc = F32(scale)
        for j in range(row.shape[0]):
            r, sign = _reduce_pi_f32(row[j] + offset[j])
            row[j] = (sc * sign) * _cos_poly_f32(r * r)
    else:
        _cos_row(row, offset, scale, bound <= FAST_TRIG_MAX)


@nb.njit(inline="always", cache=True, error_model="numpy", fastmath=FMA)
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


def cos_row_typed(row, offset, scale, bound):
    """Compile-time dispatch on the row's dtype (see the overload below)."""


@overload(cos_row_typed, inline="always")
def _ov_cos_row_typed(row, offset, scale, bound):
    if row.dtype == types.float32:
        return lambda row, offset, scale, bound: _cos_row_f32(row, offset, scale, bound)
    return lambda row, offset, scale, bound: _cos_row(row, offset, scale,
                                                      bound <= FAST_TRIG_MAX)


def sincos_to_typed(args, m, scale, bound, row):
    """Compile-time dispatch on the row's dtype (see the overload below)."""


@overload(sincos_to_typed, inline="always")
def _ov_sincos_to_typed(args, m, scale, bound, row):
    if row.dtype == types.float32:
        return lambda args, m, scale, bound, row: _sincos_to_f32(args, m, scale, bound, row)
    return lambda args, m, scale, bound, row: _sincos_core(args, m, scale,
                                                           bound <= FAST_TRIG_MAX, row)


def like_precision(x, v):
    """v in the precision of x, an array (its dtype) or a scalar (float32: float32)."""


@overload(like_precision)
def _ov_like(x, v):
    if (x.dtype if isinstance(x, types.Array) else x) == types.float32:
        return lambda x, v: F32(v)
    return lambda x, v: np.float64(v)
