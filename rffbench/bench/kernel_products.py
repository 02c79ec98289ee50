"""``--products``: one exact kernel product per kernel against its limits (GEMM rate,
the kernel's elementwise function), in worker processes (a pool per command)."""
from __future__ import annotations

import math

import numpy as np

from ..exact import KernelOperator
from ..experiment import apply_threads
from ..kernels import make_kernel
from ..measure.workers import time_in_processes

#: the kernels of --products and the elementwise numpy operation(s) that stand for
#: their transcendental part in the measured limit (per pair; "d x" = per coordinate)
PRODUCT_KERNELS = {
    "gaussian": ("exp",), "laplacian": ("exp",), "matern": ("sqrt", "exp"),
    "cauchy": ("d x divide",), "arccos1": ("arccos", "sqrt"), "polynomial": (),
    "additive_chi2": ("d x divide",), "skewed_chi2": ("d x exp", "d x divide"),
    "linear": (), "exp_dot": ("exp",), "intersection": (),
}
#: vector operations per coordinate in the measured limit, at the GEMM's rate of
#: operations (an FMA is one operation, two flops): a lower bound of what a coordinate's
#: term costs.  One for a product or a squared difference (the GEMM's own FMA); two for
#: the sums of minima (Laplacian's L1 distance as sum x + sum y - 2 sum min, the
#: intersection kernel: a min and an add, which no FMA fuses); the other kernels' terms
#: need more than one and are counted as one, so their limits stay lower bounds.
COORDINATE_OPS = {"laplacian": 2, "intersection": 2}


def _elementwise_fn(op, n=1 << 16):
    """numpy's (SIMD where numpy has it) ``op`` on an in-cache float64 buffer of ``n``
    elements: the machine's rate for that function (seconds per call / n / threads)."""
    x = np.random.default_rng(0).uniform(0.01, 0.99, n)
    neg = -x  # exp's argument made once: np.exp(-x) would time a negation and a fresh array
    out = np.empty_like(x)
    return {"exp": lambda: np.exp(neg, out=out), "sqrt": lambda: np.sqrt(x, out=out),
            "arccos": lambda: np.arccos(x, out=out),
            "divide": lambda: np.divide(1.0, x, out=out)}[op]


#: elements of the in-cache buffer the elementwise rates are measured on
ELEMENTWISE_N = 1 << 16
#: the square GEMM the float64 and float32 rates are measured on
RATE_GEMM_N = 3000


def _operators(name, n, d):
    """(X, V, {impl: KernelOperator}) of one kernel's product benchmark."""

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    V = rng.standard_normal((n, 1))
    k = make_kernel(name)
    Xk = np.abs(X) if k.input_floor() > -math.inf else X  # the chi2 kernels' domain
    k.fit(Xk)
    return Xk, V, {"float64": KernelOperator(k, Xk),
                   "mixed": KernelOperator(k, Xk, precision="mixed"),
                   "python_tiles": KernelOperator(k, Xk, fused=False)}


def products_cell(name, n, d):
    """One kernel's products and their limits' measurements, built in each worker process:
    the three products, the float64 and float32 GEMM rates and the kernel's elementwise
    functions, interleaved, so that every fraction is a ratio taken under one load."""
    _, V, ops = _operators(name, n, d)
    A = np.random.default_rng(1).standard_normal((RATE_GEMM_N, RATE_GEMM_N))
    A32 = A.astype(np.float32)
    C, C32 = np.empty_like(A), np.empty_like(A32)
    impls = {key: (lambda op=op: op.matvec(V)) for key, op in ops.items()}
    impls["limit/dgemm"] = lambda: np.matmul(A, A, out=C)
    impls["limit/sgemm"] = lambda: np.matmul(A32, A32, out=C32)
    for fn in {op.split(" x ")[-1] for op in PRODUCT_KERNELS[name]}:
        impls[f"limit/{fn}"] = _elementwise_fn(fn, ELEMENTWISE_N)
    return impls


def products_bench(n=12000, d=16, kernels=tuple(PRODUCT_KERNELS), repeats=5, threads=None,
                   processes=3):
    """One exact kernel product K V (V: n x 1) per kernel: the fused numba product in
    float64 and mixed precision and the tile-by-tile Python path, against two limits.

    * ``limit_s`` (the flop count): n^2 / 2 pairs x (2d + 2 + 10) flops at the
      large-DGEMM rate (2d for the distance, 2 for the multiply-add, about 10 for a
      vectorised exp; mixed: at the SGEMM rate);
    * ``measured_limit_s``: n^2 / 2 pairs x (2 c d + 4) flops at the GEMM rate (c: the
      vector operations per coordinate, COORDINATE_OPS, default 1) plus the kernel's
      transcendental part (PRODUCT_KERNELS) at numpy's rate for it on this machine.
    Each kernel is a cell timed in ``processes`` worker processes
    (rffbench.measure.workers): the products, the GEMM rates and the elementwise rates
    interleaved in each, so a fraction (limit / measured, 1 = at the limit) is taken
    within one process, under one load, then the median over processes; ``gemm_gflops``
    is the median rate.  The linear and polynomial kernels' products go through their
    explicit features when these are few, the intersection kernel's through its sorted
    coordinates (``product``: the operator's route; rffbench.exact.KernelOperator): no
    pair is evaluated, and the pairs' limits do not bound them."""

    threads = apply_threads(threads)
    pairs = n * n / 2.0
    flops = 2 * RATE_GEMM_N**3
    rows = []
    for name in kernels:
        _, _, ops = _operators(name, n, d)
        cells = time_in_processes(products_cell, dict(name=name, n=n, d=d), repeats,
                                  processes=processes, threads=threads)

        def rate(m, prec):
            return flops / m["limit/dgemm" if prec == "float64" else "limit/sgemm"]

        def trans(m):  # seconds per pair of the kernel's elementwise part, this worker
            return sum(m[f"limit/{op.split(' x ')[-1]}"] / ELEMENTWISE_N / threads
                       * (d if op.startswith("d x") else 1) for op in PRODUCT_KERNELS[name])

        per_coord = COORDINATE_OPS.get(name, 1)
        for impl in ops:
            prec = "mixed" if impl == "mixed" else "float64"

            def lim(m, prec=prec):
                return pairs * (2 * d + 2 + 10) / rate(m, prec)

            def mlim(m, prec=prec):
                return pairs * ((2 * per_coord * d + 4) / rate(m, prec)
                                + trans(m) / (2 if prec == "mixed" else 1))

            M, route = ops[impl].n_features, ops[impl].route
            rows.append(dict(kernel=name, n=n, d=d, impl=impl,
                             product=route if M is None else f"{M} {route}",
                             precision=ops[impl].precision_used,
                             threads=threads, time_s=cells.median(impl),
                             spread_s=cells.spread(impl), process_ratio=cells.ratio(impl),
                             unstable=cells.unstable(impl),
                             gemm_gflops=cells.per_process(lambda m, p=prec: rate(m, p)) / 1e9,
                             limit_s=cells.per_process(lim),
                             fraction_of_limit=cells.per_process(
                                 lambda m, f=lim, i=impl: f(m) / m[i]),
                             measured_limit_s=cells.per_process(mlim),
                             fraction_of_measured_limit=cells.per_process(
                                 lambda m, f=mlim, i=impl: f(m) / m[i])))
    return rows
