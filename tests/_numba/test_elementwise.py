"""rffbench/_numba/elementwise.py: the fast cos, sin, exp and acos against numpy's, in
ulps over their ranges, and the wide-vector marking."""
import math

import numpy as np
import pytest

from rffbench import _numba as nbk
from tests.helpers import has_avx512

TRIG_RANGE = 1.0e4  # |w.x + b| seen in practice; the contract is |x| <= 1e4 (and beyond)


def _grid(lo, hi, n=2_000_001):
    x = np.linspace(lo, hi, n)
    return np.concatenate([x, np.random.default_rng(0).uniform(lo, hi, n)])


#: LLVM CPU names whose own tuning already vectorises with 512-bit registers
PREFER_512_CPUS = ("znver4", "znver5")


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
    if has_avx512():
        assert "zmm" in next(iter(wide_fn.inspect_asm().values()))
        # where LLVM's tuning for the host prefers 256-bit vectors (Intel's AVX-512 cores),
        # the same loop without the call does not use them; on CPUs tuned for 512-bit
        # vectors already (AMD's Zen 4: znver4) both do, and the call changes nothing
        import llvmlite.binding as ll

        if ll.get_host_cpu_name() not in PREFER_512_CPUS:
            assert "zmm" not in next(iter(narrow_fn.inspect_asm().values()))
