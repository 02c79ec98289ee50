"""Speed: rffbench's kernels against plain numpy, scikit-learn and the machine's limit.

Each part is a *cell* timed in ``measure.speed.processes`` worker processes, one after
the other (rffbench.measure.workers, the practice of pyperf; the workers are started once
per command and time every cell of its sweep): in each, after one
warm-up call of each implementation, ``repeats`` (>= 5) interleaved calls (A B C A B C
...), each call's output released before the next starts.  A time is the median of the
processes' medians, its spread their range; ``process_ratio`` (max / min of the medians)
above ``measure.speed.unstable_ratio`` marks it ``unstable`` (a record, the note, the
figures and the summary say so).  Ratios (speed-ups, fractions of the limit) are taken
within each process and then their median: a limit is measured interleaved with what it
bounds, under the same load.  A fresh output's allocation and first touch is measured
as its own number (``first_touch_s`` of ``alloc/output``: a parallel pass over a new
array minus the same pass over a kept one); the fraction of the limit of a map or a Gram is
taken on the same call into one kept output (``kept/<map>``, rff's ``transform/rff_out``,
``kept/gram_<kernel>``), timed in the same loop: the code's share, not the machine's memory
(docs/performance.md, "Timing on a virtual machine").  Parts
(``measure.speed.parts``),
on the run's training set X (N x d), D and dtype:

* ``maps``: the transform of every rffbench map in ``measure.speed.maps`` that
  represents the run's kernel (``transform/<map>``), the plain numpy reference
  ``np.cos(X @ W + b) * sqrt(2/D)`` with the ``rff`` map's W, b
  (``transform/numpy``, shift-invariant kernels) and the kernel's scikit-learn sampler,
  called directly (``transform/sklearn_rbf``: RBFSampler, ``sklearn_polysketch``:
  PolynomialCountSketch, ``sklearn_chi2``, ``sklearn_skewed_chi2``).
  **Peers** (``measure.speed.peers``: PyTorch, JAX where installed): each in its own
  worker process (rffbench.peers) with the rff map's W and b, once with a fresh output
  per call (``transform/torch``, compared with every map's transform) and once into a
  reused buffer (``transform/torch_out``, compared with ``transform/rff_out``: rff's
  ``transform(X, out=buf)``); ``speedup_vs_torch`` / ``speedup_vs_jax``, the note says
  which output and which version.
  **Limit** (rffbench.measure.limits), from rates measured in the same workers' loops:
  max(compute, memory), compute = the map's least flops at the peak rate of a square
  GEMM (``limit/peak``) + its cosines (one per output; one per frequency of [cos, sin]
  pairs) or exponentials (``positive``) at our functions' in-cache rate (``limit/cos``,
  ``limit/exp``) + a structured map's (sorf, fastfood) FWHTs at the in-cache tile rate
  (``limit/fwht_L``); tensorsketch's flops are its p + 1 real FFTs per row; memory = one
  store of the N x D output (``limit/write``).
* ``gram``: the exact Gram of min(N, ``gram_max_n``) rows: rffbench's numba
  Gram vs scikit-learn ``rbf_kernel`` / ``laplacian_kernel`` (same
  lengthscale); limit = the same roofline: the n (n + 1) / 2 pairs' d FMAs (Gaussian)
  or d sub, abs and add (Laplacian) at the peak, one exp per pair, one store of n x n.
* ``train``: on min(N, ``train_max_n``) rows and the same targets: rffbench
  ridge on ``rff`` features (map + accumulate + solve) vs scikit-learn
  ``RBFSampler`` + ``Ridge``, and rffbench exact KRR vs scikit-learn
  ``KernelRidge`` (lam = ``model.lam`` when a number, else 1e-3); limit = the
  flop count (projection, Z^T Z, Cholesky; or X X^T, Cholesky) at the rate of
  a syrk of the ridge's own Z^T Z shape, plus one pass over Z (or K).

Records: ``measurement`` = ``speed``, ``method`` = ``<task>/<implementation>``,
``metric`` in time_s, throughput_rows_per_s, process_ratio, unstable (1 or 0),
speedup_vs_sklearn, speedup_vs_numpy, speedup_vs_torch, speedup_vs_jax,
fraction_of_limit (= limit / measured) and limit_time_s; ``first_touch_s`` of
``alloc/output``.  The time notes carry the load at the start of each worker; the
records' ``runtime_env`` the transparent-huge-page setting and free page reporting.
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from typing import List

import numpy as np

from .. import _numba as nbk
from ..blas_choice import CHOICES as BLAS_CHOICES
from ..blas_choice import missing as blas_missing
from ..checks import MAX_REPEATS, Applies, Check, Int, OneOf, Real, as_list, check_constraints
from ..errors import ConfigError
from ..kernels.base import SYMMETRIC_TILES_MIN_N
from ..memory import Need
from ..peers import PEERS, time_peer_outputs
from ..results import record
from .base import Measurement
from .limits import own_flops, rate_cells, roofline
from .workers import UNSTABLE_RATIO, interleaved_times, time_in_processes

log = logging.getLogger(__name__)

FWHTS_PER_BLOCK = {"sorf": 3, "fastfood": 2}
#: maps without a GEMM (count sketches + FFTs)
SKETCHES = ("tensorsketch",)
#: maps whose elementwise function is an exponential per output (the others of a
#: shift-invariant kernel take cosines)
EXP_MAPS = ("positive",)
DEFAULT_LAM = 1e-3
#: a cell below this fraction of its limit is out of reach: the report names what holds it
#: there (:func:`known_bound`), as docs/performance.md measured it part by part
WITHIN_REACH = 0.75
#: up to this d a map's GEMM (K = d) runs far below the peak (BLAS's K = 8 GEMM at a
#: quarter of it, measured); the d = 8 cells are the ones docs/performance.md takes apart
SMALL_K = 16
#: up to this d a map's GEMM still runs visibly below the peak (BLAS's K = 64 GEMM at
#: 0.72-0.77 of it, measured; K = 512 at the peak)
MID_K = 128
#: what holds a cell below WITHIN_REACH, by implementation (the dense maps: at d <= MID_K)
BOUNDS = {
    "gram": "its tiles' GEMMs (K = d + 2) run at about 0.7 of the peak and alone take longer "
            "than the whole limit; their transposed stores add a tenth",
    "gram_blocks": "below 2,048 rows a Gram is the whole product X X^T (twice the pairs' "
                   "flops the limit counts, its GEMM at K = d + 2 at about 0.7 of the peak) "
                   "and then a pass of exps over it: about 0.4 of the limit at most",
    "tensorsketch": "its FFTs run at a fifth of the GEMM peak (scipy.fft, 15-21 GFLOP/s) and "
                    "alone take 5x the limit",
    "maclaurin": "its GEMM has K = d (at a sixth of the peak) and each feature's product "
                 "gathers its projections",
    "dense": "its GEMM has K = d: BLAS runs it at a quarter of the peak, a fused map runs at "
             "the cosines' plus that GEMM's rate",
    "dense_mid": "its GEMM has K = d: BLAS runs K = 64 at 0.72-0.77 of the peak, which with "
                 "the cosines caps the cell at about 0.8, and the fused loop runs 10-20% "
                 "above that GEMM's and the cosines' times",
    "leverage": "its GEMM has K = d, and the pair weights are a second pass over the output",
    "positive": "its GEMM has K = d and writes the output, which the exp pass then reads and "
                "writes again (not fused)",
    "structured": "the FWHT projection loads each tile from the input, scales it between its "
                  "FWHTs and stores it transposed, and writes the output, which the cosine "
                  "pass then reads and writes again (not fused)",
    "train": "its Cholesky factorisation runs below the syrk rate its flops are counted at "
             "(LAPACK's potrf: 39 GFLOP/s at 1,348 x 1,348, 66 at 5,000, syrk 89)",
}
DENSE_MAPS = ("rff", "rff_out", "rff_pairs", "orf", "gauss_hermite")


def known_bound(method, d, n=None):
    """What holds the cell of ``method`` (task/impl) at ``d`` inputs (and ``n`` rows, a
    Gram's) below WITHIN_REACH of its limit, as measured (docs/performance.md, "What holds
    a cell below 0.75"), or None where nothing has been measured."""
    task, _, impl = method.partition("/")
    if task == "gram":
        small = n is not None and n < SYMMETRIC_TILES_MIN_N
        return BOUNDS["gram_blocks" if small else "gram"]
    if task == "train":
        return BOUNDS["train"]
    if impl in ("tensorsketch", "maclaurin"):
        return BOUNDS[impl]
    if impl in FWHTS_PER_BLOCK:  # at every d: the cosine pass is apart from the FWHTs
        return BOUNDS["structured"]
    if d > MID_K:
        return None
    if impl in DENSE_MAPS:
        return BOUNDS["dense" if d <= SMALL_K else "dense_mid"]
    return BOUNDS.get(impl)


def held_text(why):
    """What a fraction record's note says of a cell below WITHIN_REACH (``why``, from
    :func:`known_bound`; '' without one): read back by :func:`held_of`."""
    return f"; below {WITHIN_REACH:g}: {why} (docs/performance.md)" if why else ""


def held_of(note):
    """What holds a cell below WITHIN_REACH as its fraction record's note says it
    (:func:`held_text`), or None (a note without it: older records)."""
    m = re.search(r"; below [0-9.]+: (.*) \(docs/performance\.md\)", str(note))
    return m.group(1) if m else None


SPEED_PARTS = ("maps", "gram", "train")


@dataclass
class SpeedConfig:
    """measure.speed: rffbench vs numpy, scikit-learn and the machine's limit (off by default)."""

    enabled: bool = False
    #: interleaved warm repeats per implementation and worker process (>= 5)
    repeats: int = 5
    #: worker processes each cell is timed in, one after the other (pyperf's practice;
    #: started once per command): the records keep the median of their medians and range
    processes: int = 3
    #: per-process medians further apart than this (max / min) mark a cell unstable in
    #: the records, the figures and the summary
    unstable_ratio: float = UNSTABLE_RATIO
    #: which comparisons: maps (transforms), gram (exact Gram), train (ridge / exact KRR)
    parts: List[str] = field(default_factory=lambda: ["maps", "gram", "train"])
    #: rffbench maps timed in the maps part (those that cannot represent the kernel are noted)
    maps: List[str] = field(default_factory=lambda: ["rff", "rff_pairs", "orf", "sorf",
                                                     "fastfood"])
    #: rows of the exact Gram comparison
    gram_max_n: int = 10000
    #: rows of the training comparison (exact KRR included)
    train_max_n: int = 5000
    #: optional peers of the rff map (torch, jax where installed), each timed in its own
    #: worker process with the same W and b (rffbench.peers); [] = none
    peers: List[str] = field(default_factory=lambda: ["torch", "jax"])
    #: the BLAS of the timing workers' products (rffbench.blas_choice): default (numpy's
    #: and scipy's) or mkl (oneMKL, `pip install mkl`); sweep both to time them side by side
    blas: str = "default"

    constraints = {
        "repeats": Int(5, MAX_REPEATS),
        "processes": Int(1, 100),
        "unstable_ratio": Real(gt=1.0, le=100.0),
        "parts": Check(lambda v: isinstance(v, (list, tuple)) and len(v) >= 1
                       and all(p in SPEED_PARTS for p in v),
                       f"use a non-empty list of {', '.join(SPEED_PARTS)}", [[], ["x"], "x"]),
        "maps": Check(lambda v: isinstance(v, (list, tuple)) and len(v) >= 1
                      and all(isinstance(m, str) for m in v),
                      "use a non-empty list of map names, e.g. [rff,orf]", [[], "x", [1]]),
        "gram_max_n": Int(2), "train_max_n": Int(2), "blas": OneOf(BLAS_CHOICES),
        "peers": Check(lambda v: isinstance(v, (list, tuple)) and all(p in PEERS for p in v),
                       f"use a list of {', '.join(PEERS)} (or [])", [["x"], "x"]),
    }

    #: each part's own keys have an effect only when the part is measured
    applies = {
        key: Applies(lambda c, part=part: part in c.measure.speed.parts,
                     lambda c, part=part: f"measure.speed.parts={list(c.measure.speed.parts)} "
                                          f"leaves out {part}")
        for key, part in (("maps", "maps"), ("peers", "maps"), ("gram_max_n", "gram"),
                          ("train_max_n", "train"))}

    def __post_init__(self):
        self.parts = as_list(self.parts)
        self.peers = as_list(self.peers)
        self.maps = as_list(self.maps)
        check_constraints(self, "measure.speed")


def interleaved(impls, repeats):
    """{name: (median s, spread s)} of ``impls`` (name -> fn) in this process, A B C A B C
    ..., after one warm-up call of each; each call's output released before the next
    (:func:`rffbench.measure.workers.interleaved_times`)."""
    times = interleaved_times(impls, repeats)
    return {k: (float(np.median(v)), float(np.max(v) - np.min(v))) for k, v in times.items()}


def _maps_ok(ctx, names):
    from ..features import FEATURE_MAPS

    ok, skipped = [], []
    for name in names:
        cls = FEATURE_MAPS[name]
        try:
            cls.check_params(ctx.cfg.D, ctx.kernel.name)
            cls.check_data(ctx.cfg.D, ctx.n_train, ctx.data.d, kernel=ctx.kernel.name)
        except ConfigError as exc:
            skipped.append((name, str(exc)))
            continue
        if cls.tags.sparse_output:
            skipped.append((name, "sparse output: not comparable with dense transforms"))
            continue
        ok.append(name)
    return ok, skipped


def _records(cells, names, rows_n, limits, repeats, sklearn_key=None, numpy_key=None, ours=(),
             note="", touch_method=None, kept=None, shape=None):
    """The records of ``names`` from their :class:`~rffbench.measure.workers.CellTimes`.

    Times: the median of the worker processes' medians, their range as the spread, the
    ratio max / min of the per-process medians and whether it marks the cell unstable.
    Ratios (speed-ups, fractions of the limit) are taken within each process, then their
    median: a fraction is a ratio measured under one load.  ``limits``: name -> (fn of one
    process's {impl: median} -> seconds, how); ``kept``: name -> the same call into a kept
    output, timed in the same cell, whose time the fraction is taken on (the code's, without
    a fresh output's allocation and first touch; that first touch, measured by a pass of its
    own and taken off the fresh time as it once was, overshot what the calls paid: 22 ms off
    a 119 ms call whose kept-output twin ran at the limit).  ``touch_method``: the method
    under which the cell's fresh-output first touch (``alloc/fresh`` - ``alloc/kept``) is
    recorded as ``first_touch_s``, where the cell times one.  ``shape``: the cell's (rows,
    d), with which a fraction below WITHIN_REACH says in its note what holds it there
    (:func:`known_bound`)."""
    kept = kept or {}
    out = []
    loads = f"load at the start of each worker: {cells.loads_text()}"
    for name in names:
        t = cells.median(name)
        words = "; ".join(filter(None, [note, cells.note(name), loads]))
        out.append(record("speed", "time_s", t, "s", method=name, spread=cells.spread(name),
                          n_repeats=repeats, note=words))
        out.append(record("speed", "throughput_rows_per_s", rows_n / t, "rows/s", method=name))
        if cells.processes > 1:
            out.append(record("speed", "process_ratio", cells.ratio(name), method=name,
                              note="max / min of the worker processes' medians"))
            out.append(record("speed", "unstable", float(cells.unstable(name)), method=name,
                              note=f"1: the processes' medians differ by more than "
                                   f"{cells.unstable_ratio:g}x"))
        for key, metric in ((sklearn_key, "speedup_vs_sklearn"),
                            (numpy_key, "speedup_vs_numpy")):
            if key and key in cells.runs and name != key and name in ours:
                out.append(record("speed", metric,
                                  cells.per_process(lambda m, k=key: m[k] / m[name]),
                                  method=name, note=f"{key} / {name}, within each worker"))
        if name in limits:
            lim, how = limits[name]

            code = kept.get(name, name)

            def fraction(m, lim=lim, code=code):
                return lim(m) / m[code]

            out.append(record("speed", "limit_time_s", cells.per_process(lim), "s",
                              method=name, note=how))
            how_measured = (f"; measured into a kept output ({code}, "
                            f"{cells.median(code):.4g} s)" if name in kept else "")
            value = cells.per_process(fraction)
            held = held_text(known_bound(name, shape[1], shape[0])
                             if shape and value < WITHIN_REACH else None)
            out.append(record("speed", "fraction_of_limit", value, method=name,
                              note="limit / measured (1 = at the machine's limit), within "
                                   "each worker" + how_measured + held))
    if touch_method:
        out.append(record("speed", "first_touch_s", cells.per_process(first_touch_of), "s",
                          method=touch_method,
                          note="a fresh output's allocation and first touch: a parallel "
                               "pass over a new array minus the same pass over a kept one, "
                               "within each worker; " + loads))
    blas = cells.blas_text()
    return [dict(r, blas=blas) if blas else r for r in out]  # the workers' BLAS, not ours


def first_touch_of(m):
    """A fresh output's allocation and first touch in one worker ({impl: median}) of a cell
    built with :func:`first_touch_cells`."""
    return m["alloc/fresh"] - m["alloc/kept"]


def first_touch_cells(shape, dtype):
    """``alloc/fresh`` (one numba-parallel store-only pass over a new array of ``shape``,
    its pages first touched by all threads at once, as a map's writes touch them) and
    ``alloc/kept`` (the same pass over a kept array): their difference is the allocation
    and first touch of a fresh output.  Store-only, as a map writes its output: a pass that
    reads first (``scale_inplace``, as it was) faults each page twice, a read mapping the
    zero page and the write copying it, and overstated the first touch up to 2x."""
    kept = np.zeros(shape, dtype=dtype)
    return {"alloc/fresh": lambda: nbk.fill_inplace(np.empty(shape, dtype=dtype), 0.0),
            "alloc/kept": lambda: nbk.fill_inplace(kept, 0.0)}


def sklearn_peer(kernel_name):
    """The registered scikit-learn peer map (``sklearn_*``) of a kernel, or None."""
    from ..features import FEATURE_MAPS

    for name in FEATURE_MAPS:
        cls = FEATURE_MAPS.find(name)
        if cls is not None and name.startswith("sklearn_") and kernel_name in (cls.KERNELS or ()):
            return name
    return None


def _peer_rows(name, X, W, b, threads, repeats, cells, ours):
    """A peer timed in its own process (rffbench.peers), once with a fresh output per call
    (``transform/<peer>``, against our maps' transform) and once into a reused buffer
    (``transform/<peer>_out``, against ``transform/rff_out``, rff with ``out=``)."""
    rows = []
    for output, t, spread, note, blas in time_peer_outputs(name, X, W, b, threads, repeats):
        method = f"transform/{name}" + ("_out" if output == "out" else "")
        rows.append(record("speed", "time_s", t, "s", method=method, spread=spread,
                           n_repeats=repeats if t is not None else None, note=note,
                           blas=blas))
        if t is None:
            break  # one line saying why is enough
        against = ours if output == "fresh" else ["transform/rff_out"]
        rows += [record("speed", "speedup_vs_" + name, t / cells.median(k), method=k,
                        note=f"{method} / {k} ({note}; ours: {cells.blas_text()})",
                        blas=cells.blas_text()) for k in against if k in cells.runs]
    return rows


#: butterfly updates (L log2 L x ROW_BLOCK per tile FWHT) per thread in one call of the FWHT
#: tile rate: ~7 ms on this AMD EPYC, so that a parallel loop's start is a fraction of a
#: percent of it (at 2^22, 1.5 ms and a numpy renormalisation inside the call, the rate read
#: 3-5% slow and sorf at d = 1,024 ran "above its limit" at up to 1.15)
FWHT_WORK = 1 << 24


def _fwht_plan(L, threads):
    """(repeats per call, tiles) of the FWHT tile rate: tiles of L x ROW_BLOCK, an even
    number per thread, each transformed ``repeats`` times while it stays in L1, about
    FWHT_WORK butterfly updates per thread."""
    work = FWHT_WORK // (L * max(1, int(math.log2(max(L, 2)))) * nbk.ROW_BLOCK)
    reps = 2 * max(1, min(work // 2, int(250 / math.log10(max(L, 2)))))  # L^(reps/2) finite
    return reps, 2 * threads * max(1, -(-work // (2 * reps)))


def fwht_tile_cell(L, threads):
    """``nbk.fwht_tiles_repeat`` on the tiles of :func:`_fwht_plan` (normalised once, so
    that L^(reps/2) stays finite; the kernel only reads them): the in-cache butterfly rate
    of all threads that the structured maps' limit is counted in; one call's time /
    (reps x tiles) is one tile's."""
    reps, tiles = _fwht_plan(L, threads)
    V = np.random.default_rng(0).standard_normal((tiles, L, nbk.ROW_BLOCK))
    V /= np.abs(V).max()
    out = np.empty_like(V)
    return lambda: nbk.fwht_tiles_repeat(V, reps, out)


def limit_cells(fitted, out_shape, dtype, threads, X=None):
    """The rates the limits of the fitted maps ``fitted`` (name -> map) are made of, built
    in each worker: rffbench.measure.limits's peak GEMM (with the maps' own GEMM shape,
    given the rows ``X``), the output's store and the elementwise functions the maps
    evaluate (the cosine; the exponential where a map of EXP_MAPS is timed), and the FWHT
    tile rate of each structured map's L."""
    functions = ("cos",) + (("exp",) if set(fitted) & set(EXP_MAPS) else ())
    impls = rate_cells(out_shape, dtype, threads, functions, X)
    for L in sorted({f.padded_dim_ for m, f in fitted.items() if m in FWHTS_PER_BLOCK}):
        impls[f"limit/fwht_{L}"] = fwht_tile_cell(L, threads)
    return impls


def kept_name(m, out_rff):
    """The implementation that times map ``m`` into a kept output in the maps cell: rff's
    own ``transform/rff_out`` where it is timed (a peer's reused buffer is compared with
    it), else ``kept/<m>``."""
    return "transform/rff_out" if m == "rff" and out_rff else f"kept/{m}"


def maps_cell(X, fitted, D, rff_wb, sampler, Xp, peer_key, out_rff, threads):
    """The maps part's implementations, built in each worker: every map's transform (a
    fresh output per call, and into one kept N x D output: :func:`kept_name`), numpy's
    reference, scikit-learn's sampler, the limit's rates (:func:`limit_cells`) and the
    first touch of an N x D output."""
    N = X.shape[0]
    impls = {f"transform/{m}": (lambda f=f: f.transform(X)) for m, f in fitted.items()}
    if rff_wb is not None:
        W, b = rff_wb
        scale = X.dtype.type(math.sqrt(2.0 / D))
        impls["transform/numpy"] = lambda: np.cos(X @ W + b) * scale
    out_buf = np.empty((N, D), dtype=X.dtype)
    if out_rff:
        impls["transform/rff_out"] = lambda: fitted["rff"].transform(X, out=out_buf)
    for m, f in fitted.items():  # the code's own time, for its fraction of the limit
        if kept_name(m, out_rff) not in impls:
            impls[kept_name(m, out_rff)] = lambda f=f: f.transform(X, out=out_buf)
    if sampler is not None:
        impls[peer_key] = lambda: sampler.transform(Xp)
    impls.update(limit_cells(fitted, (N, D), X.dtype, threads, X))
    impls.update(first_touch_cells((N, D), X.dtype))
    return impls


def _timing_kwargs(ctx, cfg):
    return dict(repeats=cfg.repeats, processes=cfg.processes, threads=ctx.threads,
                unstable_ratio=cfg.unstable_ratio, blas=cfg.blas)


def _map_work(m, f, shape, D, kernel):
    """(flops, elementwise function, its count, FWHTs) of one transform of ``shape`` rows
    by map ``m`` (fitted ``f``): the least work any implementation of it must do."""
    N, d = shape
    F = getattr(f, "n_freq_", D)
    function = ("exp" if m in EXP_MAPS else "cos" if kernel.shift_invariant else None)
    # a [cos, sin] pair shares one range reduction: one cosine's cost per frequency
    count = N * (D if function == "exp" or hasattr(f, "random_offset_") else F)
    if m in FWHTS_PER_BLOCK:
        blocks = -(-F // f.padded_dim_)
        return 0.0, function, count, -(-N // nbk.ROW_BLOCK) * blocks * FWHTS_PER_BLOCK[m]
    if m in SKETCHES:  # p + 1 real FFTs of length D per row (2.5 D log2 D flops each)
        p = f.kernel_.degree
        return (p + 1) * 2.5 * N * D * math.log2(max(D, 2)), None, 0, 0
    return 2.0 * N * d * F, function, count, 0


def map_limit(m, f, shape, D, kernel, threads, cells):
    """(limit of one worker's medians, how in words) of map ``m``'s transform: the
    roofline of rffbench.measure.limits (its rates timed in ``cells``, a cell built with
    :func:`limit_cells`), an FWHT's work at the in-cache tile rate."""
    flops, function, count, n_fwht = _map_work(m, f, shape, D, kernel)
    fwht_s, what = None, ""
    if n_fwht:
        L = f.padded_dim_
        per_tile = 1.0 / math.prod(_fwht_plan(L, threads))
        what = (f"{n_fwht} FWHTs of {L} x {nbk.ROW_BLOCK} tiles ({FWHTS_PER_BLOCK[m]} per "
                "block; the in-cache tile rate: butterflies are load/store-bound)")

        def fwht_s(mm):
            return n_fwht * mm[f"limit/fwht_{L}"] * per_tile

    limit, how = roofline(cells, threads, flops, function, count, fwht_s, what,
                          own_flops((shape[0], D), shape[1]))
    if m in SKETCHES:
        how += f" ({f.kernel_.degree + 1} real FFTs of length {D} per row)"
    return limit, how


def _part_maps(ctx, cfg, X):
    D = ctx.cfg.D
    names, skipped = _maps_ok(ctx, [m for m in cfg.maps if not m.startswith("sklearn_")])
    fitted = {m: ctx.make_map(name=m).fit(X) for m in names}
    rff_wb, peers, W, b = None, [], None, None
    if ctx.kernel.shift_invariant:  # the plain numpy reference of the rff map
        rff = ctx.make_map(name="rff").fit(X)
        W, b = rff.random_weights_.astype(X.dtype), rff.random_offset_.astype(X.dtype)
        rff_wb = (W, b)
        peers = list(cfg.peers)
    out_rff = bool(peers) and "rff" in fitted  # ours into a reused buffer, as a peer's out=
    peer = sklearn_peer(ctx.kernel.name)
    sampler = Xp = None
    if peer is not None:
        try:  # scikit-learn's sampler itself, without rffbench's wrapper
            pm = ctx.make_map(name=peer).fit(X)
            sampler, Xp = pm.sampler_, pm.sampler_input(X)
        except ConfigError as exc:
            skipped.append((peer, str(exc)))
            peer = None
    peer_key = f"transform/{peer}" if peer else None
    log.info("speed: transforms of %d x %d -> D=%d (%s) in %d worker process(es): %s",
             *X.shape, D, X.dtype, cfg.processes, ", ".join(
                 [f"transform/{m}" for m in fitted] + (["numpy"] if rff_wb else [])
                 + ([peer_key] if peer_key else [])))
    cells = time_in_processes(maps_cell, dict(
        X=X, fitted=fitted, D=D, rff_wb=rff_wb, sampler=sampler, Xp=Xp, peer_key=peer_key,
        out_rff=out_rff, threads=ctx.threads),
        **_timing_kwargs(ctx, cfg))
    limits = {f"transform/{m}": map_limit(m, f, X.shape, D, ctx.kernel, ctx.threads, cells)
              for m, f in fitted.items()}
    if "transform/rff_out" in cells.runs:
        limits["transform/rff_out"] = limits["transform/rff"]
    ours = [f"transform/{m}" for m in fitted]
    shown = [k for k in cells.runs if not k.startswith(("limit/", "alloc/", "kept/"))]
    rows = _records(cells, shown, X.shape[0], limits, cfg.repeats, peer_key,
                    "transform/numpy" if rff_wb is not None else None, ours,
                    touch_method="alloc/output",
                    kept={f"transform/{m}": kept_name(m, out_rff) for m in fitted},
                    shape=X.shape)
    for name in peers:
        rows += _peer_rows(name, X, W, b, ctx.threads, cfg.repeats, cells, ours)
    rows += [record("speed", "time_s", None, method=f"transform/{m}", note=why)
             for m, why in skipped]
    if peer is None:
        rows.append(record("speed", "time_s", None, method="transform/sklearn",
                           note=f"scikit-learn has no sampler for kernel={ctx.kernel.name}"))
    return rows


def gram_cell(Xg, ls, threads=1):
    """The gram part's implementations, built in each worker, with the rates of their
    limit (rffbench.measure.limits: peak GEMM, the n x n output's store, exp)."""
    from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

    from ..kernels import make_kernel

    n = Xg.shape[0]
    gauss = make_kernel("gaussian", lengthscale=ls).fit(None)
    lap = make_kernel("laplacian", lengthscale=ls).fit(None)
    kept = np.empty((n, n), dtype=Xg.dtype)  # the code's own time, for its fraction
    impls = {
        "gram/rffbench_gaussian": lambda: gauss.gram(Xg),
        "gram/sklearn_rbf_kernel": lambda: rbf_kernel(Xg, gamma=0.5 / ls**2),
        "gram/rffbench_laplacian": lambda: lap.gram(Xg),
        "gram/sklearn_laplacian_kernel": lambda: laplacian_kernel(Xg, gamma=1.0 / ls),
        "kept/gram_gaussian": lambda: gauss.gram(Xg, out=kept),
        "kept/gram_laplacian": lambda: lap.gram(Xg, out=kept),
    }
    impls.update(rate_cells((n, n), Xg.dtype, threads, ("exp",)))
    impls.update(first_touch_cells((n, n), Xg.dtype))
    return impls


def _part_gram(ctx, cfg, X):
    Xg = X[: min(X.shape[0], cfg.gram_max_n)]
    n, d = Xg.shape
    log.info("speed: exact Gram of %d x %d, Gaussian and Laplacian vs scikit-learn", n, d)
    cells = time_in_processes(gram_cell, dict(Xg=np.ascontiguousarray(Xg), ls=ctx.kernel.ls,
                                              threads=ctx.threads),
                              **_timing_kwargs(ctx, cfg))
    # the least work: the n (n + 1) / 2 pairs of a symmetric Gram, d products (Gaussian: one
    # FMA each, the X X^T half) or d sub, abs and add (Laplacian, counted as flops at the
    # peak), one exp per pair, and the n x n output stored once
    pairs = n * (n + 1) / 2.0
    rows = []
    for kern, sk in (("gaussian", "rbf_kernel"), ("laplacian", "laplacian_kernel")):
        ours = f"gram/rffbench_{kern}"
        limit, how = roofline(cells, ctx.threads, pairs * d * (2.0 if kern == "gaussian" else 3.0),
                              "exp", pairs)
        if kern == "laplacian":
            how += " (sub, abs and add per pair and coordinate counted as flops)"
        limits = {ours: (limit, how)}
        rows += _records(cells, [ours, f"gram/sklearn_{sk}"], n, limits, cfg.repeats,
                         f"gram/sklearn_{sk}", None, [ours], note=f"{n} x {d}",
                         touch_method="alloc/gram_output", kept={ours: f"kept/gram_{kern}"},
                         shape=(n, d))
    # one first-touch record for the part
    touch = [r for r in rows if r["metric"] == "first_touch_s"]
    return [r for r in rows if r["metric"] != "first_touch_s"] + touch[:1]


def train_cell(Xt, yt, D, ls, lam, proto):
    """The train part's implementations, built in each worker (``proto``: the unfitted
    rff map of the run's settings)."""
    from sklearn.base import clone
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import Ridge

    from ..exact import ExactKRR
    from ..kernels import make_kernel
    from ..models import FeatureRidge

    n = Xt.shape[0]
    Y = yt[:, None]
    gauss = make_kernel("gaussian", lengthscale=ls).fit(None)

    def ours_ridge():
        FeatureRidge(lam, center=False).fit(clone(proto).fit(Xt), Xt, Y)

    def sk_ridge():
        Z = RBFSampler(gamma=0.5 / ls**2, n_components=D, random_state=0).fit_transform(Xt)
        Ridge(alpha=lam, fit_intercept=False, solver="cholesky").fit(Z, yt)

    Zt = np.random.default_rng(0).standard_normal((D, n))  # a features-shaped operand
    G = np.empty((D, D))
    return {
        "train/rffbench_ridge": ours_ridge,
        "train/sklearn_rbfsampler_ridge": sk_ridge,
        "train/rffbench_exact_krr": lambda: ExactKRR(gauss, lam, center=False).fit(Xt, Y),
        "train/sklearn_kernelridge": lambda: KernelRidge(alpha=lam, kernel="rbf",
                                                         gamma=0.5 / ls**2).fit(Xt, yt),
        "limit/syrk": lambda: np.matmul(Zt, Zt.T, out=G),
        "limit/pass": lambda: nbk.scale_inplace(Zt, 1.0),
    }


def _part_train(ctx, cfg, X, y):
    from ..kernels import make_kernel

    n = min(X.shape[0], cfg.train_max_n)
    Xt, yt = np.ascontiguousarray(X[:n]), np.asarray(y[:n], dtype=np.float64)
    D, ls = ctx.cfg.D, ctx.kernel.ls
    lam = ctx.cfg.model.lam if ctx.cfg.model.lam != "auto" else DEFAULT_LAM
    proto = ctx.make_map(name="rff", kernel=make_kernel("gaussian", lengthscale=ls).fit(None))
    log.info("speed: training on %d rows (D=%d, lam=%g): ridge on features and exact KRR vs "
             "scikit-learn", n, D, lam)
    cells = time_in_processes(train_cell, dict(Xt=Xt, yt=yt, D=D, ls=ls, lam=lam, proto=proto),
                              **_timing_kwargs(ctx, cfg))
    syrk = cells.median("limit/syrk")
    d = Xt.shape[1]

    def rate(m):  # flop/s of BLAS syrk on the ridge's own Z^T Z, in this worker
        return float(n) * D * D / m["limit/syrk"]

    shown = rate(dict(zip(["limit/syrk"], [syrk])))
    limits = {
        "train/rffbench_ridge": (
            lambda m: (2.0 * n * d * D + n * D * D + D**3 / 3.0) / rate(m) + m["limit/pass"],
            f"projection + Z^T Z + Cholesky flops at the syrk rate ({shown / 1e9:.1f} "
            "GFLOP/s) + one pass over Z"),
        "train/rffbench_exact_krr": (
            lambda m: (2.0 * n * n * d + n**3 / 3.0) / rate(m) + m["limit/pass"] * n / D,
            f"X X^T + Cholesky flops at the syrk rate ({shown / 1e9:.1f} GFLOP/s) + one "
            "pass over K"),
    }
    rows = []
    for ours, sk in (("train/rffbench_ridge", "train/sklearn_rbfsampler_ridge"),
                     ("train/rffbench_exact_krr", "train/sklearn_kernelridge")):
        rows += _records(cells, [ours, sk], n, limits, cfg.repeats, sk, None, [ours],
                         note=f"{n} rows, Gaussian kernel", shape=(n, d))
    return rows


class Speed(Measurement):
    """rffbench's kernels against plain numpy, scikit-learn and the machine's limit
    (experiment=speed)."""

    name = "speed"
    Config = SpeedConfig
    selection_keys = ('parts', 'maps')
    conditioned_by = ('model.',)

    def check(self, ctx, cfg):
        from ..features import FEATURE_MAPS

        why = blas_missing(cfg.blas)
        if why:
            raise ConfigError.not_allowed("measure.speed.blas", cfg.blas, f": {why}")
        unknown = [m for m in cfg.maps if m not in FEATURE_MAPS]
        if unknown:
            raise ConfigError(f"measure.speed.maps={list(cfg.maps)} is not allowed: unknown map(s) "
                              f"{', '.join(unknown)}; use names from {', '.join(FEATURE_MAPS)}")

    def needs(self, ctx, cfg):
        """maps: the fitted maps, numpy's and the limit's own-shape GEMM's d x D operands, a
        preallocated output and the transient outputs of numpy's and scikit-learn's
        transforms (about 5 N x D); gram: ours, scikit-learn's and the limit's
        n x n outputs (4 n^2); train: exact KRR and KernelRidge (4 t^2) and ridge (3 D^2)."""
        key, total, n_train_of = ctx.rows_key()
        d, it = ctx.data.d, ctx.itemsize
        gkey, tkey = "measure.speed.gram_max_n", "measure.speed.train_max_n"
        parts = set(cfg.parts)

        def nbytes(v):
            N, D = n_train_of(v[key]), v["D"]
            maps = 8.0 * (3 * d + 2) * D * (len(cfg.maps) + 3) + 5.0 * N * D * max(it, 8) \
                if "maps" in parts else 0.0
            g = min(N, v[gkey])
            gram = 8.0 * 4 * g * g if "gram" in parts else 0.0
            t = min(N, v[tkey])
            train = 8.0 * (4 * t * t + 3 * D * D + 2 * t * D) if "train" in parts else 0.0
            return max(maps, gram, train)

        return [Need("the speed measurement (" + ", ".join(sorted(parts)) + ")", nbytes,
                     {"D": (ctx.cfg.D, 1), key: (total, 4), gkey: (cfg.gram_max_n, 2),
                      tkey: (cfg.train_max_n, 2)})]

    def run(self, ctx, cfg):
        X = ctx.data.X_train
        rows = []
        if "maps" in cfg.parts:
            rows += _part_maps(ctx, cfg, X)
        if "gram" in cfg.parts:
            rows += _part_gram(ctx, cfg, X)
        if "train" in cfg.parts:  # any task: the labels serve as regression targets
            rows += _part_train(ctx, cfg, X, ctx.data.y_train)
        return rows
