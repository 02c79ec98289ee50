"""rffbench/measure/limits.py: the roofline a speed cell's limit is, from its measured rates
(the rates' implementations run and keep their data in range; the limit is max(compute,
memory) of them, and its words carry the same numbers)."""
import math

import numpy as np
import pytest

from rffbench.measure import limits


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rate_cells_time_the_peak_the_store_and_the_functions(dtype):
    impls = limits.rate_cells((7, 5), dtype, threads=2, functions=("cos", "exp"))
    assert set(impls) == {"limit/peak", "limit/peak_wide", "limit/peak_threads", "limit/write",
                          "limit/cos", "limit/exp"}
    for name, fn in impls.items():  # repeated passes stay in range: cos of [-1, 1], exp <= 0
        for _ in range(3 if name in ("limit/cos", "limit/exp") else 1):
            fn()
    for name in ("limit/cos", "limit/exp"):  # the block each rewrites in place
        Z = next(c.cell_contents for c in impls[name].__closure__
                 if isinstance(c.cell_contents, np.ndarray) and c.cell_contents.ndim == 2
                 and c.cell_contents.shape[0] > 1)
        assert Z.shape == (limits.RATE_ROWS * 2, limits.RATE_COLS) and Z.dtype == dtype
        assert np.all(np.abs(Z) <= 1.0) and np.all(np.isfinite(Z)), name
    assert set(limits.rate_cells((3, 3), dtype, 1, ())) == {
        "limit/peak", "limit/peak_wide", "limit/peak_threads", "limit/write"}
    # given the cell's rows, the GEMM of its own shape too: X (N x d) times d x D, written
    # into the output-shaped kept array, in the cell's dtype
    X = np.arange(14.0).reshape(7, 2)
    own = limits.rate_cells((7, 5), dtype, 1, (), X)
    assert set(own) - set(impls) == {"limit/peak_own"}
    own["limit/peak_own"]()
    kept = next(c.cell_contents for c in own["limit/peak_own"].__closure__
                if isinstance(c.cell_contents, np.ndarray) and c.cell_contents.shape == (7, 5))
    Wo = next(c.cell_contents for c in own["limit/peak_own"].__closure__
              if isinstance(c.cell_contents, np.ndarray) and c.cell_contents.shape == (2, 5))
    assert kept.dtype == Wo.dtype == dtype
    np.testing.assert_allclose(kept, X.astype(dtype) @ Wo, rtol=1e-5)
    assert limits.own_flops((7, 5), 2) == 2.0 * 7 * 2 * 5


def test_the_limit_is_the_larger_of_compute_and_memory():
    peak_s = 2.0 * limits.PEAK_SIDE**3 / 50e9  # a 50 GFLOP/s peak
    per = limits.RATE_ROWS * 2 * limits.RATE_COLS * limits.RATE_REPS
    m = {"limit/peak": peak_s, "limit/write": 0.004, "limit/cos": 2e-9 * per,
         "limit/exp": 1e-9 * per}
    r = limits.Rates(m, threads=2)
    assert r.peak == pytest.approx(50e9) and r.t_cos == pytest.approx(2e-9)
    # the peak is the fastest of BLAS's own threads (square, or wide with K = PEAK_SIDE / 2:
    # the same flops) and one single-threaded GEMM per thread
    both = limits.Rates({**m, "limit/peak_threads": peak_s}, threads=2)
    assert both.peak == pytest.approx(100e9)
    wide = limits.Rates({**m, "limit/peak_wide": peak_s / 1.5}, threads=2)
    assert wide.peak == pytest.approx(75e9)
    # and the cell's own GEMM shape, where it is timed: the peak when it is the fastest
    # (oneMKL ran 2,500 x 512 -> 4,096 faster than the square ones), named in the words
    own = limits.Rates({**m, "limit/peak_own": 0.01}, threads=2, own=1e9)
    assert own.peak == pytest.approx(100e9) and own.own
    assert "(the cell's own GEMM shape)" in own.words(1e9)
    slow = limits.Rates({**m, "limit/peak_own": 0.1}, threads=2, own=1e9)
    assert slow.peak == pytest.approx(50e9) and not slow.own
    assert limits.Rates({**m, "limit/peak_own": 0.01}, threads=2).peak == pytest.approx(50e9)
    # compute-bound: 1 GFLOP = 0.02 s, 10^6 cosines = 0.002 s, above the 0.004 s store
    assert r.limit(1e9, "cos", 1e6) == pytest.approx(0.022)
    assert r.limit(1e9, "cos", 1e6, extra_s=0.01) == pytest.approx(0.032)
    # memory-bound: a small GEMM and no function: the store
    assert r.limit(1e6) == pytest.approx(0.004)
    words = r.words(1e9, "exp", 1e6)
    assert words.startswith("max(compute, memory), compute-bound: compute = 1 GFLOP at the "
                            "peak 50.0 GFLOP/s (GEMMs of 2 x 1024^3 flops) = 0.02 s")
    assert "1e+06 exp at 1 ns each (in cache) = 0.001 s" in words
    assert words.endswith("memory = one store of the output, 0.004 s")
    assert "memory-bound" in r.words(1e6)
    no_exp = limits.Rates({k: v for k, v in m.items() if k != "limit/exp"}, 2)
    assert math.isnan(no_exp.t_exp) and no_exp.limit(1e6, None, 10) == pytest.approx(0.004)
