"""The transform benchmark (``--shape``): every map, scikit-learn's RBFSampler, the peers
and each map's limit (the speed measurement's roofline, rffbench.measure.limits) on one
N x d x D shape, in worker processes (a pool)."""
from __future__ import annotations

import math

import numba
import numpy as np
from sklearn.kernel_approximation import RBFSampler

from ..features import FEATURE_MAPS
from ..kernels import Gaussian
from ..measure.speed import first_touch_cells, limit_cells, map_limit
from ..measure.speed import first_touch_of as touch
from ..measure.workers import time_in_processes
from ..peers import time_peer_outputs

DEFAULT_SHAPES = [(100_000, 8, 1024), (20_000, 512, 4096)]


def _fitted(N, d, D, dtype, seed, maps):
    """(X, kernel, {map: fitted}) of one shape, the same in the parent and each worker."""
    X = np.random.default_rng(seed).standard_normal((N, d)).astype(dtype)
    kernel = Gaussian(lengthscale=float(np.sqrt(d)))
    return X, kernel, {m: FEATURE_MAPS[m](kernel=kernel, n_components=D,
                                          random_state=seed).fit(X) for m in maps}


def shape_cell(N, d, D, dtype, seed, maps, out_rff, threads):
    """The transform benchmark's implementations for one shape, built in each worker
    process (rffbench.measure.workers): every map's transform (a fresh output per call),
    rff into a kept buffer (``rff_out``), scikit-learn's RBFSampler, the rates of the
    maps' limits (rffbench.measure.speed.limit_cells) and the first touch of a fresh
    N x D output."""
    X, kernel, fitted = _fitted(N, d, D, dtype, seed, maps)
    sk = RBFSampler(gamma=0.5 / kernel.ls**2, n_components=D, random_state=seed).fit(X)
    impls = {m: (lambda f=f: f.transform(X)) for m, f in fitted.items()}
    if out_rff:
        reused = np.empty((N, D), dtype=dtype)
        impls["rff_out"] = lambda: fitted["rff"].transform(X, out=reused)
    impls.update(sklearn_rbf=lambda: sk.transform(X))
    impls.update(limit_cells(fitted, (N, D), np.dtype(dtype), threads, X))
    impls.update(first_touch_cells((N, D), np.dtype(dtype)))
    return impls


def bench_shape(N, d, D, dtype="float64", repeats=7, seed=0, maps=("rff", "rff_pairs"),
                peers=(), processes=3, threads=None):
    """The rows of one shape: each implementation's time (the median of ``processes``
    worker processes' medians, rffbench.measure.workers), the range of those medians,
    each process's median and whether they differ by more than the unstable ratio; the
    speed-up over scikit-learn and, for each map, the fraction of its limit taken within
    each process (rffbench.measure.speed.map_limit: the roofline of its least work at the
    rates measured in the same workers; a fresh output's allocation and first touch,
    ``first_touch_s``, taken off its time first).  ``rff_out``: rff's transform into a
    reused buffer; each of ``peers`` (rffbench.peers) in its own process with rff's W and
    b, with a fresh output per call (``torch``) and into a reused buffer (``torch_out``)."""


    threads = threads or numba.get_num_threads()
    out_rff = "rff" in maps and bool(peers)
    cells = time_in_processes(shape_cell, dict(N=N, d=d, D=D, dtype=dtype, seed=seed,
                                               maps=tuple(maps), out_rff=out_rff,
                                               threads=threads),
                              repeats, processes=processes, threads=threads)
    X, kernel, fitted = _fitted(N, d, D, dtype, seed, maps)
    limits = {m: map_limit(m, f, X.shape, D, kernel, threads, cells)[0]
              for m, f in fitted.items()}
    if out_rff:
        limits["rff_out"] = limits["rff"]
    rows = []
    for name in cells.runs:
        if name.startswith(("limit/", "alloc/")):
            continue
        ours = name in limits

        def fraction(m, name=name):
            code = m[name] - (touch(m) if name != "rff_out" else 0.0)
            return limits[name](m) / code if code > 0 else math.nan

        rows.append(dict(impl=name, time_s=cells.median(name), spread_s=cells.spread(name),
                         process_medians=" ".join(f"{v:.4g}" for v in cells.medians(name)),
                         process_ratio=cells.ratio(name), unstable=cells.unstable(name),
                         speedup_vs_sklearn=cells.per_process(
                             lambda m, name=name: m["sklearn_rbf"] / m[name]),
                         fraction_of_limit=cells.per_process(fraction) if ours else None,
                         note="" if ours or name == "sklearn_rbf" else "own process",
                         blas=cells.blas_text()))
    # a fresh output's allocation and first touch (a parallel pass over a new array minus
    # the same pass over a kept one): a column, not a row (it is no implementation's time,
    # and within the noise of small shapes it can come out below zero)
    first_touch = cells.per_process(touch)
    if "rff" in maps and peers:
        rff = fitted["rff"]
        Wr, br = rff.random_weights_.astype(dtype), rff.random_offset_.astype(dtype)
        for peer in peers:
            for output, t, spread, note, blas in time_peer_outputs(peer, X, Wr, br, threads,
                                                                   repeats):
                rows.append(dict(impl=peer + ("_out" if output == "out" else ""), time_s=t,
                                 spread_s=spread, note=note, blas=blas))
    loads = cells.loads_text()
    for r in rows:
        r.update(N=N, d=d, D=D, dtype=dtype, threads=threads, loads=loads,
                 machine=cells.machine, first_touch_s=first_touch)
    return rows
