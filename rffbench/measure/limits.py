"""The speed measurement's limits: the least time the machine allows a piece of work, a
roofline of its arithmetic and its memory traffic, from rates measured in the same worker
processes and loops as the work (rffbench.measure.workers).

A limit is ``max(compute, memory)``:

* ``compute``: the work's flops at the machine's peak GEMM rate (the fastest of
  ``limit/peak``, a square GEMM of side PEAK_SIDE in the run's dtype on the BLAS's own
  threads, ``limit/peak_wide``, a GEMM of the same flops with a shorter inner dimension
  (2 PEAK_SIDE x PEAK_SIDE / 2 times PEAK_SIDE / 2 x PEAK_SIDE: oneMKL on an AMD EPYC ran
  such shapes up to 1.3x faster than its square ones), ``limit/peak_threads``, one
  square single-threaded GEMM on each thread at once, as the fused maps call BLAS, and, in
  a maps cell, ``limit/peak_own``, the GEMM of the maps' own shape, (N x d)(d x D): oneMKL
  ran 2,500 x 512 -> 4,096 faster than all three, which put a map at 1.1 of "its limit"),
  plus each elementwise function it must evaluate (a cosine per output, or per frequency of a
  [cos, sin] pair, which shares one range reduction; an exponential) at our own
  vectorised functions' in-cache rate (``limit/cos``, ``limit/exp``: RATE_REPS passes of
  the map's own cosine or the Gram's exponential over each of RATE_ROWS rows per thread of
  RATE_COLS, a row in L1 for its passes, all in one parallel loop: a parallel loop's start,
  tens of microseconds where the threads sleep between loops, is not part of the rate);
* ``memory``: writing the output once (``limit/write``: a store-only parallel pass over a
  kept array of the output's shape, its pages touched: the write bandwidth).

Both parts are measured, never assumed, and both are lower bounds of their own: a code
that overlaps all of its arithmetic with its stores reaches the limit, none passes it, so a
fraction of the limit above 1 (beyond the cell's spread) is a bug in the limit.
docs/performance.md gives each map's formula.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _numba as nbk

#: the side of the square GEMMs whose rate is the peak (2 x 1024^3 flops, ~20 ms on 2 cores in
#: float64: long enough that waking the BLAS threads is not part of it; 512 was half the
#: float32 rate in a worker)
PEAK_SIDE = 1024
#: the elementwise rates' block: RATE_ROWS rows per thread of RATE_COLS (a row is 16 KB in
#: float64: L1-resident), each row passed RATE_REPS times (~1 ms a call: one pass of a
#: 64-row block with a parallel start each, as first measured, read the cosine 1.1-1.8 ns
#: where it costs 0.5-0.9)
RATE_ROWS, RATE_COLS, RATE_REPS = 4, 2048, 64


def rate_cells(out_shape, dtype, threads, functions=("cos",), X=None):
    """The rate implementations of a cell (name -> zero-argument callable), built in each
    worker: ``limit/peak`` (and its other shapes), ``limit/write`` (over a kept array of
    ``out_shape``), ``limit/<f>`` for each elementwise function in ``functions`` (cos, exp)
    and, given the cell's rows ``X`` (N x d, N = out_shape[0]), ``limit/peak_own``: X times
    a d x D matrix into the kept array (its flops: :func:`own_flops`)."""
    rng = np.random.default_rng(0)
    T = max(1, threads)
    A = rng.standard_normal((T, PEAK_SIDE, PEAK_SIDE)).astype(dtype)
    B = rng.standard_normal((PEAK_SIDE, PEAK_SIDE)).astype(dtype)
    C = np.empty((T, PEAK_SIDE, PEAK_SIDE), dtype=dtype)
    half = PEAK_SIDE // 2
    Aw = rng.standard_normal((2 * PEAK_SIDE, half)).astype(dtype)
    Cw = np.empty((2 * PEAK_SIDE, PEAK_SIDE), dtype=dtype)
    kept = np.zeros(out_shape, dtype=dtype)

    def each_thread():
        with nbk.blas_single_thread():
            nbk.gemm_each_thread(A, B, C)

    impls = {"limit/peak": lambda: nbk.matmul(A[0], B, out=C[0]),
             "limit/peak_wide": lambda: nbk.matmul(Aw, B[:half], out=Cw),
             "limit/peak_threads": each_thread,
             "limit/write": lambda: nbk.fill_inplace(kept, 0.0)}
    if X is not None:
        Xo = np.ascontiguousarray(X, dtype=dtype)
        Wo = rng.standard_normal((X.shape[1], out_shape[1])).astype(dtype)
        impls["limit/peak_own"] = lambda: nbk.matmul(Xo, Wo, out=kept)
    rows = RATE_ROWS * T
    if "cos" in functions:  # cos(z) of z in [-1, 1] stays there: every pass on the fast path
        Z = rng.uniform(-1.0, 1.0, (rows, RATE_COLS)).astype(dtype)
        zero, bound = np.zeros(RATE_COLS, dtype=dtype), np.full(rows, 1.0)
        impls["limit/cos"] = lambda: nbk.cos_rows_repeat(Z, zero, bound, RATE_REPS)
    if "exp" in functions:  # -exp(x) of x <= 0 stays in [-1, 0)
        E = -rng.uniform(0.0, 1.0, (rows, RATE_COLS)).astype(dtype)
        impls["limit/exp"] = lambda: nbk.exp_rows_repeat(E, RATE_REPS)
    return impls


def own_flops(out_shape, d):
    """The flops of ``limit/peak_own`` (rows N x d into an N x D output)."""
    return 2.0 * out_shape[0] * d * out_shape[1]


class Rates:
    """One worker process's rates, from its medians ``m`` ({implementation: median s}) of
    the cells of :func:`rate_cells`; ``own``: the flops of its ``limit/peak_own``."""

    def __init__(self, m, threads, own=0.0):
        flops = 2.0 * PEAK_SIDE**3
        own_rate = own / m.get("limit/peak_own", math.inf)
        self.peak = max(flops / m["limit/peak"],  # flop/s: the fastest way to run GEMMs
                        flops / m.get("limit/peak_wide", math.inf),
                        max(1, threads) * flops / m.get("limit/peak_threads", math.inf),
                        own_rate)
        self.own = own_rate >= self.peak > 0  # the cell's own GEMM shape gave the peak
        self.write_s = m["limit/write"]  # one store of the output
        per = RATE_ROWS * max(1, threads) * RATE_COLS * RATE_REPS
        self.t_cos = m["limit/cos"] / per if "limit/cos" in m else math.nan  # s / element
        self.t_exp = m["limit/exp"] / per if "limit/exp" in m else math.nan

    def elementwise(self, function, count):
        """Seconds for ``count`` evaluations of ``function`` (cos, exp; None: none)."""
        if not function or not count:
            return 0.0
        return count * (self.t_cos if function == "cos" else self.t_exp)

    def compute(self, flops, function=None, count=0, extra_s=0.0):
        """Seconds of arithmetic: ``flops`` at the peak, ``count`` evaluations of
        ``function``, ``extra_s`` more (an FWHT's tile time)."""
        return flops / self.peak + self.elementwise(function, count) + extra_s

    def limit(self, flops, function=None, count=0, extra_s=0.0):
        """max(compute, memory): :meth:`compute` against one store of the output."""
        return max(self.compute(flops, function, count, extra_s), self.write_s)

    def words(self, flops, function=None, count=0, extra_s=0.0, what=""):
        """The limit's formula with this process's numbers (a record's note)."""
        which = "the cell's own GEMM shape" if self.own else f"GEMMs of 2 x {PEAK_SIDE}^3 flops"
        parts = [f"{flops / 1e9:.3g} GFLOP at the peak {self.peak / 1e9:.1f} GFLOP/s "
                 f"({which}) = {flops / self.peak:.4g} s"]
        if function and count:
            each = self.elementwise(function, 1)
            parts.append(f"{count:.4g} {function} at {each * 1e9:.3g} ns each (in cache) = "
                         f"{count * each:.4g} s")
        if extra_s:
            parts.append(f"{what} {extra_s:.4g} s")
        compute = self.compute(flops, function, count, extra_s)
        bound = "memory" if self.write_s >= compute else "compute"
        return (f"max(compute, memory), {bound}-bound: compute = " + " + ".join(parts)
                + f"; memory = one store of the output, {self.write_s:.4g} s")


def roofline(cells, threads, flops, function=None, count=0, extra=None, what="", own=0.0):
    """(limit of one worker's medians, how in words with the cell's medians) of a piece of
    work for rffbench.measure.speed's records: ``flops``, ``count`` evaluations of
    ``function`` and ``extra(medians)`` seconds more (an FWHT's tiles; ``what`` names
    them), against one store of the output, from the rates of :func:`rate_cells` timed in
    ``cells`` (a :class:`~rffbench.measure.workers.CellTimes`); ``own``: the flops of the
    cell's ``limit/peak_own``, where it has one."""
    def extra_s(m):
        return extra(m) if extra else 0.0

    def limit(m):
        return Rates(m, threads, own).limit(flops, function, count, extra_s(m))

    med = {k: cells.median(k) for k in cells.runs}
    return limit, Rates(med, threads, own).words(flops, function, count, extra_s(med), what)

