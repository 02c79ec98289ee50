"""Speed: rffbench's kernels against plain numpy, scikit-learn and the machine's limit.

In one process, interleaved (A B C A B C ...), after one warm-up call of each,
medians of ``repeats`` (>= 5) calls with the spread (max - min) kept.  Parts
(``measure.speed.parts``), on the run's training set X (N x d), D and dtype:

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
  **Limit**, measured in the same loop: a GEMM of the map's shape into a
  preallocated output (``limit/gemm``; its flop rate is the machine's rate on
  this shape) plus one streaming pass over the N x D output (``limit/pass``).
  A dense map's lower bound is gemm + pass; a structured map's (sorf,
  fastfood) is its FWHT flop count (blocks x FWHTs x L log2 L adds per row)
  at the GEMM's flop rate, plus the pass; tensorsketch's (no GEMM: count
  sketches and FFTs) is 2p + 1 passes over the output, its memory traffic.
* ``gram``: the exact Gram of min(N, ``gram_max_n``) rows: rffbench's numba
  Gram vs scikit-learn ``rbf_kernel`` / ``laplacian_kernel`` (same
  lengthscale); limit = a GEMM X X^T of that shape plus one pass (Gaussian),
  three such instruction counts (sub, abs, add) plus the pass (Laplacian, L1).
* ``train``: on min(N, ``train_max_n``) rows and the same targets: rffbench
  ridge on ``rff`` features (map + accumulate + solve) vs scikit-learn
  ``RBFSampler`` + ``Ridge``, and rffbench exact KRR vs scikit-learn
  ``KernelRidge`` (lam = ``model.lam`` when a number, else 1e-3); limit = the
  flop count (projection, Z^T Z, Cholesky; or X X^T, Cholesky) at the rate of
  a syrk of the ridge's own Z^T Z shape, plus one pass over Z (or K).

Records: ``measurement`` = ``speed``, ``method`` = ``<task>/<implementation>``,
``metric`` in time_s, throughput_rows_per_s, speedup_vs_sklearn,
speedup_vs_numpy, speedup_vs_torch, speedup_vs_jax, fraction_of_limit (= limit / measured) and limit_time_s.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import List

import numpy as np

from .. import _numba as nbk
from ..checks import MAX_REPEATS, Applies, as_list, Check, Int, check_constraints
from ..clock import UNMEASURED, clean_call
from ..errors import ConfigError, RffbenchError
from ..memory import Need
from ..peers import PEERS, time_peer_outputs
from ..results import record
from .base import Measurement

log = logging.getLogger(__name__)

FWHTS_PER_BLOCK = {"sorf": 3, "fastfood": 2}
#: maps without a GEMM (count sketches + FFTs)
SKETCHES = ("tensorsketch",)
DEFAULT_LAM = 1e-3


SPEED_PARTS = ("maps", "gram", "train")


@dataclass
class SpeedConfig:
    """measure.speed: rffbench vs numpy, scikit-learn and the machine's limit (off by default)."""

    enabled: bool = False
    #: interleaved warm repeats per implementation (>= 5); medians and spread recorded
    repeats: int = 5
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

    constraints = {
        "repeats": Int(5, MAX_REPEATS),
        "parts": Check(lambda v: isinstance(v, (list, tuple)) and len(v) >= 1
                       and all(p in SPEED_PARTS for p in v),
                       f"use a non-empty list of {', '.join(SPEED_PARTS)}", [[], ["x"], "x"]),
        "maps": Check(lambda v: isinstance(v, (list, tuple)) and len(v) >= 1
                      and all(isinstance(m, str) for m in v),
                      "use a non-empty list of map names, e.g. [rff,orf]", [[], "x", [1]]),
        "gram_max_n": Int(2), "train_max_n": Int(2),
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
    """{name: (median s, spread s)} of ``impls`` (name -> fn), A B C A B C ..., each call
    timed with numba's compiler idle (rffbench.clock: a call during which numba compiled
    is timed again)."""
    for fn in impls.values():
        fn()  # warm-up: numba compile or cache load, first-touch page faults
    times = {k: [] for k in impls}
    for _ in range(repeats):
        for name, fn in impls.items():
            _, t = clean_call(fn, what=name)
            if t.seconds is None:
                raise RffbenchError(f"{name}: {UNMEASURED}")
            times[name].append(t.seconds)
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


def _records(res, rows_n, limits, repeats, sklearn_key=None, numpy_key=None, ours=(), note=""):
    out = []
    sk = res.get(sklearn_key, (None,))[0] if sklearn_key else None
    npy = res.get(numpy_key, (None,))[0] if numpy_key else None
    for name, (t, spread) in res.items():
        if name.startswith("limit/"):
            continue
        out.append(record("speed", "time_s", t, "s", method=name, spread=spread,
                          n_repeats=repeats, note=note))
        out.append(record("speed", "throughput_rows_per_s", rows_n / t, "rows/s", method=name))
        if sk and name != sklearn_key and name in ours:
            out.append(record("speed", "speedup_vs_sklearn", sk / t, method=name,
                              note=f"{sklearn_key} / {name}"))
        if npy and name != numpy_key and name in ours:
            out.append(record("speed", "speedup_vs_numpy", npy / t, method=name,
                              note=f"{numpy_key} / {name}"))
        if name in limits:
            lim, how = limits[name]
            out.append(record("speed", "limit_time_s", lim, "s", method=name, note=how))
            out.append(record("speed", "fraction_of_limit", lim / t, method=name,
                              note="limit / measured (1 = at the machine's limit)"))
    return out


def sklearn_peer(kernel_name):
    """The registered scikit-learn peer map (``sklearn_*``) of a kernel, or None."""
    from ..features import FEATURE_MAPS

    for name in FEATURE_MAPS:
        cls = FEATURE_MAPS.find(name)
        if cls is not None and name.startswith("sklearn_") and kernel_name in (cls.KERNELS or ()):
            return name
    return None


def _peer_rows(name, X, W, b, threads, repeats, res, ours):
    """A peer timed in its own process (rffbench.peers), once with a fresh output per call
    (``transform/<peer>``, against our maps' transform) and once into a reused buffer
    (``transform/<peer>_out``, against ``transform/rff_out``, rff with ``out=``)."""
    rows = []
    for output, t, spread, note in time_peer_outputs(name, X, W, b, threads, repeats):
        method = f"transform/{name}" + ("_out" if output == "out" else "")
        rows.append(record("speed", "time_s", t, "s", method=method, spread=spread,
                           n_repeats=repeats if t is not None else None, note=note))
        if t is None:
            break  # one line saying why is enough
        against = ours if output == "fresh" else ["transform/rff_out"]
        rows += [record("speed", "speedup_vs_" + name, t / res[k][0], method=k,
                        note=f"{method} / {k} ({note})") for k in against if k in res]
    return rows


def fwht_tile_seconds(L, repeats, threads=None):
    """Seconds per FWHT of one L x ROW_BLOCK tile: 2 tiles per thread, each transformed
    in place many times while it stays in L1 (median of ``repeats``), i.e. the in-cache
    butterfly rate of all threads that the structured maps' limit is counted in."""
    import numba

    work = (1 << 22) // (L * max(1, int(math.log2(max(L, 2)))) * nbk.ROW_BLOCK)
    reps = 2 * max(1, min(work // 2, int(250 / math.log10(max(L, 2)))))  # L^(reps/2) finite
    tiles = 2 * (threads or numba.get_num_threads()) * max(1, -(-work // reps))
    V = np.random.default_rng(0).standard_normal((tiles, L, nbk.ROW_BLOCK))
    nbk.fwht_tiles_repeat(V, 2)  # warm-up
    times = []
    for _ in range(repeats):
        V /= np.abs(V).max()
        _, t = clean_call(lambda: nbk.fwht_tiles_repeat(V, reps), what="fwht tile")
        if t.seconds is None:
            raise RffbenchError(f"the FWHT tile rate: {UNMEASURED}")
        times.append(t.seconds / (reps * tiles))
    return float(np.median(times))


def _part_maps(ctx, cfg, X):
    D = ctx.cfg.D
    names, skipped = _maps_ok(ctx, [m for m in cfg.maps if not m.startswith("sklearn_")])
    fitted = {m: ctx.make_map(name=m).fit(X) for m in names}
    buf = np.empty((X.shape[0], D), dtype=X.dtype)
    W = np.ascontiguousarray(
        np.random.default_rng(ctx.cfg.seed).standard_normal((X.shape[1], D)), dtype=X.dtype)
    impls = {f"transform/{m}": (lambda f=f: f.transform(X)) for m, f in fitted.items()}
    peers = []
    if ctx.kernel.shift_invariant:  # the plain numpy reference of the rff map
        rff = ctx.make_map(name="rff").fit(X)
        W, b = rff.random_weights_.astype(X.dtype), rff.random_offset_.astype(X.dtype)
        scale = X.dtype.type(math.sqrt(2.0 / D))
        impls["transform/numpy"] = lambda: np.cos(X @ W + b) * scale
        peers = list(cfg.peers)
        if peers and "transform/rff" in impls:  # ours into a reused buffer, as a peer's out=
            out_buf = np.empty((X.shape[0], D), dtype=X.dtype)
            impls["transform/rff_out"] = lambda: fitted["rff"].transform(X, out=out_buf)
    peer = sklearn_peer(ctx.kernel.name)
    if peer is not None:
        try:  # scikit-learn's sampler itself, without rffbench's wrapper
            pm = ctx.make_map(name=peer).fit(X)
            Xp = pm.sampler_input(X)
            impls[f"transform/{peer}"] = lambda: pm.sampler_.transform(Xp)
        except ConfigError as exc:
            skipped.append((peer, str(exc)))
            peer = None
    impls["limit/gemm"] = lambda: np.matmul(X, W, out=buf)
    impls["limit/pass"] = lambda: nbk.scale_inplace(buf, 1.0)
    log.info("speed: transforms of %d x %d -> D=%d (%s): %s", *X.shape, D, X.dtype,
             ", ".join(k for k in impls if not k.startswith("limit/")))
    res = interleaved(impls, cfg.repeats)
    gemm, pas = res["limit/gemm"][0], res["limit/pass"][0]
    rate = 2.0 * X.shape[0] * X.shape[1] * D / gemm  # flop/s of BLAS on this shape
    limits = {}
    for m, f in fitted.items():
        key = f"transform/{m}"
        if m in FWHTS_PER_BLOCK:
            L = f.padded_dim_
            blocks = -(-f.n_freq_ // L)
            n_fwht = -(-X.shape[0] // nbk.ROW_BLOCK) * blocks * FWHTS_PER_BLOCK[m]
            t_tile = fwht_tile_seconds(L, cfg.repeats)
            limits[key] = (n_fwht * t_tile + pas, f"{FWHTS_PER_BLOCK[m]} FWHTs per block of "
                           f"{nbk.ROW_BLOCK} rows at the rate measured on cache-resident tiles "
                           f"({t_tile * 1e6:.3g} us per {L} x {nbk.ROW_BLOCK} tile: butterflies are "
                           "load/store-bound, not flop-bound) + one pass over the output")
        elif m in SKETCHES:  # FFTs, no GEMM: a lower bound from the memory traffic only
            p = f.kernel_.degree
            limits[key] = ((2 * p + 1) * pas, f"{2 * p + 1} passes over the N x D output (p = {p} "
                           "count sketches, their spectra and the product; FFT flops not "
                           "counted)")
        else:  # the map's own GEMM: n_freq columns (D/2 for cos/sin pairs)
            g = gemm * f.n_freq_ / D
            limits[key] = (g + pas, f"GEMM of the map's shape (N x d x {f.n_freq_}) into a "
                           f"preallocated output ({g:.4g} s at {rate / 1e9:.1f} GFLOP/s) + one "
                           f"pass over the N x D output ({pas:.4g} s)")
    if "transform/rff_out" in res:
        limits["transform/rff_out"] = limits["transform/rff"]
    ours = [f"transform/{m}" for m in fitted]
    rows = _records(res, X.shape[0], limits, cfg.repeats,
                    f"transform/{peer}" if peer else None,
                    "transform/numpy" if "transform/numpy" in res else None, ours)
    for name in peers:
        rows += _peer_rows(name, X, W, b, ctx.threads, cfg.repeats, res, ours)
    rows += [record("speed", "time_s", None, method=f"transform/{m}", note=why)
             for m, why in skipped]
    if peer is None:
        rows.append(record("speed", "time_s", None, method="transform/sklearn",
                           note=f"scikit-learn has no sampler for kernel={ctx.kernel.name}"))
    return rows


def _part_gram(ctx, cfg, X):
    from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

    from ..kernels import make_kernel

    Xg = X[: min(X.shape[0], cfg.gram_max_n)]
    n, d = Xg.shape
    ls = ctx.kernel.ls
    gauss = make_kernel("gaussian", lengthscale=ls).fit(None)
    lap = make_kernel("laplacian", lengthscale=ls).fit(None)
    buf = np.empty((n, n), dtype=Xg.dtype)
    impls = {
        "gram/rffbench_gaussian": lambda: gauss.gram(Xg),
        "gram/sklearn_rbf_kernel": lambda: rbf_kernel(Xg, gamma=0.5 / ls**2),
        "gram/rffbench_laplacian": lambda: lap.gram(Xg),
        "gram/sklearn_laplacian_kernel": lambda: laplacian_kernel(Xg, gamma=1.0 / ls),
        "limit/gemm": lambda: np.matmul(Xg, Xg.T, out=buf),
        "limit/pass": lambda: nbk.scale_inplace(buf, 1.0),
    }
    log.info("speed: exact Gram of %d x %d, Gaussian and Laplacian vs scikit-learn", n, d)
    res = interleaved(impls, cfg.repeats)
    gemm, pas = res["limit/gemm"][0], res["limit/pass"][0]
    how = f"X X^T GEMM ({gemm:.4g} s) + one pass over the n x n output ({pas:.4g} s)"
    rows = []
    for kern, sk in (("gaussian", "rbf_kernel"), ("laplacian", "laplacian_kernel")):
        ours = f"gram/rffbench_{kern}"
        part = {ours: res[ours], f"gram/sklearn_{sk}": res[f"gram/sklearn_{sk}"]}
        limits = {ours: (gemm + pas, how)} if kern == "gaussian" else {
            ours: (3.0 * gemm + pas, "sub, abs and add per pair and coordinate at the X X^T "
                   f"GEMM's instruction rate (3 x {gemm:.4g} s) + one pass ({pas:.4g} s)")}
        rows += _records(part, n, limits, cfg.repeats, f"gram/sklearn_{sk}", None, [ours],
                         note=f"{n} x {d}")
    return rows


def _part_train(ctx, cfg, X, y):
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import Ridge

    from ..exact import ExactKRR
    from ..kernels import make_kernel
    from ..models import FeatureRidge

    n = min(X.shape[0], cfg.train_max_n)
    Xt, yt = X[:n], np.asarray(y[:n], dtype=np.float64)
    Y = yt[:, None]
    D, ls = ctx.cfg.D, ctx.kernel.ls
    lam = ctx.cfg.model.lam if ctx.cfg.model.lam != "auto" else DEFAULT_LAM
    gauss = make_kernel("gaussian", lengthscale=ls).fit(None)

    def ours_ridge():
        fmap = ctx.make_map(name="rff", kernel=gauss).fit(Xt)
        FeatureRidge(lam, center=False).fit(fmap, Xt, Y)

    def sk_ridge():
        Z = RBFSampler(gamma=0.5 / ls**2, n_components=D, random_state=0).fit_transform(Xt)
        Ridge(alpha=lam, fit_intercept=False, solver="cholesky").fit(Z, yt)

    Zt = np.random.default_rng(0).standard_normal((D, n))  # a features-shaped operand
    G = np.empty((D, D))
    impls = {
        "train/rffbench_ridge": ours_ridge,
        "train/sklearn_rbfsampler_ridge": sk_ridge,
        "train/rffbench_exact_krr": lambda: ExactKRR(gauss, lam, center=False).fit(Xt, Y),
        "train/sklearn_kernelridge": lambda: KernelRidge(alpha=lam, kernel="rbf",
                                                         gamma=0.5 / ls**2).fit(Xt, yt),
        "limit/syrk": lambda: np.matmul(Zt, Zt.T, out=G),
        "limit/pass": lambda: nbk.scale_inplace(Zt, 1.0),
    }
    log.info("speed: training on %d rows (D=%d, lam=%g): ridge on features and exact KRR vs "
             "scikit-learn", n, D, lam)
    res = interleaved(impls, cfg.repeats)
    syrk, pas = res["limit/syrk"][0], res["limit/pass"][0]
    rate = float(n) * D * D / syrk  # flop/s of BLAS syrk on the ridge's own Z^T Z
    d = Xt.shape[1]
    ridge_lim = (2.0 * n * d * D + n * D * D + D**3 / 3.0) / rate + pas
    exact_lim = (2.0 * n * n * d + n**3 / 3.0) / rate + pas * n / D
    limits = {
        "train/rffbench_ridge": (ridge_lim, f"projection + Z^T Z + Cholesky flops at the syrk rate "
                                 f"({rate / 1e9:.1f} GFLOP/s) + one pass over Z"),
        "train/rffbench_exact_krr": (exact_lim, "X X^T + Cholesky flops at the syrk rate "
                                     f"({rate / 1e9:.1f} GFLOP/s) + one pass over K"),
    }
    rows = []
    for ours, sk in (("train/rffbench_ridge", "train/sklearn_rbfsampler_ridge"),
                     ("train/rffbench_exact_krr", "train/sklearn_kernelridge")):
        rows += _records({ours: res[ours], sk: res[sk]}, n, limits, cfg.repeats, sk, None, [ours],
                         note=f"{n} rows, Gaussian kernel")
    return rows


class Speed(Measurement):
    """rffbench's kernels against plain numpy, scikit-learn and the machine's limit (experiment=speed)."""

    name = "speed"
    Config = SpeedConfig
    selection_keys = ('parts', 'maps')
    conditioned_by = ('model.',)

    def check(self, ctx, cfg):
        from ..features import FEATURE_MAPS

        unknown = [m for m in cfg.maps if m not in FEATURE_MAPS]
        if unknown:
            raise ConfigError(f"measure.speed.maps={list(cfg.maps)} is not allowed: unknown map(s) "
                              f"{', '.join(unknown)}; use names from {', '.join(FEATURE_MAPS)}")

    def needs(self, ctx, cfg):
        """maps: the fitted maps, a preallocated output and the transient outputs of numpy's
        and scikit-learn's transforms (about 5 N x D); gram: ours, scikit-learn's and the limit's
        n x n outputs (4 n^2); train: exact KRR and KernelRidge (4 t^2) and ridge (3 D^2)."""
        key, total, n_train_of = ctx.rows_key()
        d, it = ctx.data.d, ctx.itemsize
        gkey, tkey = "measure.speed.gram_max_n", "measure.speed.train_max_n"
        parts = set(cfg.parts)

        def nbytes(v):
            N, D = n_train_of(v[key]), v["D"]
            maps = 8.0 * (3 * d + 2) * D * (len(cfg.maps) + 2) + 5.0 * N * D * max(it, 8) \
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
