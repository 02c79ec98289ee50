"""Transform benchmark: rffbench maps vs scikit-learn RBFSampler vs the machine's limit.

    python -m rffbench.bench                       # the two reference shapes
    python -m rffbench.bench --shape 50000,16,2048 --dtype float32 --out bench.csv
    python -m rffbench.bench --maps rff,rff_pairs,sorf,fastfood --shape 10000,1024,8192
    python -m rffbench.bench --startup             # cold / warm `python run.py`
    python -m rffbench.bench --exact 10000,100000  # exact KRR: cg vs Cholesky, time, RSS
    python -m rffbench.bench --stream 10000000     # ridge on a streamed .npy: time, peak RSS
    python -m rffbench.bench --dask                # backend=dask (LocalCluster) vs local
    python -m rffbench.bench --dask 100000,5000    # ... on fewer rows
    python -m rffbench.bench --products 12000,16   # exact kernel products vs their limit
    python -m rffbench.bench --products 12000,16 --save a.csv   # ... later, another commit:
    python -m rffbench.bench --products 12000,16 --compare a.csv  # time ratios new / saved

The full speed experiment (records, report figures) is ``python run.py -m
experiment=speed``; this script is the quick check.

For each shape (N, d, D), in ``--processes`` fresh worker processes one after the
other (default 3; rffbench.measure.workers), each interleaved (A B C A B C ...) after a
warm-up call of each, every call's output released before the next: the transform of
every rffbench map in ``--maps`` (Gaussian kernel; default ``rff`` and ``rff_pairs``),
scikit-learn ``RBFSampler.transform`` (same Gaussian kernel, same D), the *limit*: a
BLAS GEMM of the same shape into a preallocated output plus one streaming pass over
that output (numba ``scale_inplace``), and the first touch of a fresh N x D output
(column ``first_touch_s``: a parallel pass over a new array minus the same pass over a
kept one).  A time is the median
of the processes' medians of ``--repeats`` calls; ``process_medians`` lists them and
``unstable`` says whether they differ by more than 1.3x (the machine decided them:
docs/performance.md, "Timing on a virtual machine").  Ratios are taken within each
process, so they are meaningful on a noisy shared machine where absolute times are not;
a fresh-output map's fraction of the limit is taken on its time less the first touch.
"""
from __future__ import annotations

import argparse
import io
import math
import time

import rffbench  # noqa: F401  (thread-pool env defaults before numpy loads)

import numpy as np

from .checks import MAX_REPEATS
from .clock import clean_call
from .errors import first_line, RffbenchError

DEFAULT_SHAPES = [(100_000, 8, 1024), (20_000, 512, 4096)]


def shape_cell(N, d, D, dtype, seed, maps, out_rff):
    """The transform benchmark's implementations for one shape, built in each worker
    process (rffbench.measure.workers): every map's transform (a fresh output per call),
    rff into a kept buffer (``rff_out``), scikit-learn's RBFSampler, the limit (GEMM into
    a kept buffer + one pass) and the first touch of a fresh N x D output."""
    from sklearn.kernel_approximation import RBFSampler

    from . import _numba as nbk
    from .features import FEATURE_MAPS
    from .kernels import Gaussian
    from .measure.speed import _first_touch

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d)).astype(dtype)
    ls = float(np.sqrt(d))
    kernel = Gaussian(lengthscale=ls)
    fitted = {m: FEATURE_MAPS[m](kernel=kernel, n_components=D, random_state=seed).fit(X)
              for m in maps}
    sk = RBFSampler(gamma=0.5 / ls**2, n_components=D, random_state=seed).fit(X)
    W = rng.standard_normal((d, D)).astype(dtype)
    out = np.empty((N, D), dtype=dtype)
    impls = {m: (lambda f=f: f.transform(X)) for m, f in fitted.items()}
    if out_rff:
        reused = np.empty((N, D), dtype=dtype)
        impls["rff_out"] = lambda: fitted["rff"].transform(X, out=reused)
    impls.update(sklearn_rbf=lambda: sk.transform(X),
                 gemm=lambda: np.matmul(X, W, out=out),
                 **{"pass": lambda: nbk.scale_inplace(out, 1.0)})
    impls.update(_first_touch((N, D), np.dtype(dtype)))
    return impls


def bench_shape(N, d, D, dtype="float64", repeats=7, seed=0, maps=("rff", "rff_pairs"),
                peers=(), processes=3, threads=None):
    """The rows of one shape: each implementation's time (the median of ``processes``
    worker processes' medians, rffbench.measure.workers), the range of those medians,
    each process's median and whether they differ by more than the unstable ratio; the
    speed-up over scikit-learn and the fraction of the limit taken within each process
    (a dense map's limit: GEMM + one pass; a fresh output's allocation and first touch,
    ``first_touch_s``, taken off its time first).  ``rff_out``: rff's transform into a
    reused buffer; each of ``peers`` (rffbench.peers) in its own process with rff's W and
    b, with a fresh output per call (``torch``) and into a reused buffer (``torch_out``)."""
    import numba

    from .features import FEATURE_MAPS
    from .kernels import Gaussian
    from .measure.speed import first_touch_of as touch
    from .measure.workers import time_in_processes
    from .peers import time_peer_outputs

    threads = threads or numba.get_num_threads()
    out_rff = "rff" in maps and bool(peers)
    cells = time_in_processes(shape_cell, dict(N=N, d=d, D=D, dtype=dtype, seed=seed,
                                               maps=tuple(maps), out_rff=out_rff),
                              repeats, processes=processes, threads=threads)

    rows = []
    for name in cells.runs:
        if name in ("gemm", "pass") or name.startswith("alloc/"):
            continue
        ours = name in maps or name == "rff_out"
        dense = name in ("rff", "rff_out")  # the limit: the dense map's GEMM + one pass

        def fraction(m, name=name):
            code = m[name] - (touch(m) if name != "rff_out" else 0.0)
            return (m["gemm"] + m["pass"]) / code if code > 0 else math.nan

        rows.append(dict(impl=name, time_s=cells.median(name), spread_s=cells.spread(name),
                         process_medians=" ".join(f"{v:.4g}" for v in cells.medians(name)),
                         process_ratio=cells.ratio(name), unstable=cells.unstable(name),
                         speedup_vs_sklearn=cells.per_process(
                             lambda m, name=name: m["sklearn_rbf"] / m[name]),
                         fraction_of_limit=cells.per_process(fraction) if dense else None,
                         note="" if ours or name == "sklearn_rbf" else "own process"))
    # a fresh output's allocation and first touch (a parallel pass over a new array minus
    # the same pass over a kept one): a column, not a row (it is no implementation's time,
    # and within the noise of small shapes it can come out below zero)
    first_touch = cells.per_process(touch)
    if "rff" in maps and peers:
        X = np.random.default_rng(seed).standard_normal((N, d)).astype(dtype)
        rff = FEATURE_MAPS["rff"](kernel=Gaussian(lengthscale=float(np.sqrt(d))),
                                  n_components=D, random_state=seed).fit(X)
        Wr, br = rff.random_weights_.astype(dtype), rff.random_offset_.astype(dtype)
        for peer in peers:
            for output, t, spread, note in time_peer_outputs(peer, X, Wr, br, threads,
                                                             repeats):
                rows.append(dict(impl=peer + ("_out" if output == "out" else ""), time_s=t,
                                 spread_s=spread, note=note))
    loads = cells.loads_text()
    for r in rows:
        r.update(N=N, d=d, D=D, dtype=dtype, threads=threads, loads=loads,
                 machine=cells.machine, first_touch_s=first_touch)
    return rows


def default_runs(repeats=3):
    """The default ``python run.py`` run ``repeats`` times cold (an empty numba cache:
    every compiled function the run needs is compiled) and as often warm (loaded from the
    cache), interleaved (cold, warm, cold, ...), each in its own process and temporary
    run directory.  Returns {"cold": [...], "warm": [...]} of dicts: wall (s, the whole
    command), startup (its recorded time to the first measurement, startup_time_s),
    compile (numba's compile or load time, compile_time_s) and log (what it printed,
    stdout and stderr in order, its run directory written as ``RUN_DIR``)."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parents[1]

    def one(env, out):
        t = time.perf_counter()
        p = subprocess.run([sys.executable, str(root / "run.py"), f"hydra.run.dir={out}"],
                           cwd=root, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        wall = time.perf_counter() - t
        if p.returncode:
            raise RuntimeError(p.stdout[-2000:])
        rec = pd.read_csv(Path(out) / "records.csv")

        def value(metric):
            v = rec[rec.metric == metric].value
            return float(v.iloc[0]) if len(v) else float("nan")
        return dict(wall=wall, startup=value("startup_time_s"),
                    compile=value("compile_time_s"),
                    log=p.stdout.replace(str(Path(out).resolve()), "RUN_DIR"))

    runs = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as tmp:
        warm_env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "cache-warm"))
        one(warm_env, Path(tmp) / "prime")  # fill the warm cache once
        for r in range(repeats):
            cold_env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / f"cache-cold-{r}"))
            runs["cold"].append(one(cold_env, Path(tmp) / f"cold-{r}"))
            runs["warm"].append(one(warm_env, Path(tmp) / f"warm-{r}"))
    return runs


def startup(repeats=3):
    """:func:`default_runs` as speed-vocabulary rows: method startup/cold | startup/warm
    (medians), and startup/cold_over_warm (metric ratio: the medians' ratio)."""
    rows = []
    for kind, res in default_runs(repeats).items():
        walls, firsts, compiles = (np.array([r[k] for r in res])
                                   for k in ("wall", "startup", "compile"))
        rows.append(dict(method=f"startup/{kind}", metric="time_s",
                         time_s=float(np.median(walls)), spread=float(walls.max() - walls.min()),
                         first_measurement_s=float(np.median(firsts)),
                         compile_s=float(np.median(compiles)), n_repeats=repeats))
    rows.append(dict(method="startup/cold_over_warm", metric="ratio",
                     time_s=rows[0]["time_s"] / rows[1]["time_s"], n_repeats=repeats))
    return rows


def exact_one(n_train, solver, d=16, lam=1e-2, tol=1e-5, rank=None, seed=0, pred_out=None):
    """One exact-KRR fit on the synthetic regression data of the learning preset (d-ball,
    n_train training rows, noise 0.1, standardised), in this process: a dict of times,
    solver info, test RMSE and the process's peak RSS (run it in a fresh process)."""
    from .config import DatasetConfig
    from .datasets import load_dataset
    from .exact import ExactKRR
    from .kernels import make_kernel
    from .measure.learning import peak_rss_mb

    n = int(round(n_train / 0.75)) + 1
    data = load_dataset(DatasetConfig(name="synthetic", n=n, d=d), seed=seed)
    X, y = data.X_train[:n_train], data.y_train[:n_train]
    kernel = make_kernel("gaussian").fit(X)
    cg = dict(tol=tol, precond_rank=rank) if solver == "cg" else {}
    # numba compiled (or loaded) on a few rows first; a timed call that compiled is timed
    # again (rffbench.clock)
    ExactKRR(kernel, lam, solver=solver, random_state=seed,
             **dict(cg, precond_rank=rank and min(rank, 64)) if cg else {}).fit(
        X[:64], y[:64]).predict(data.X_test[:8])
    m = ExactKRR(kernel, lam, solver=solver, random_state=seed, **cg)
    _, fit_t = clean_call(lambda: m.fit(X, y), what="bench exact fit")
    pred, pred_t = clean_call(lambda: m.predict(data.X_test), what="bench exact predict")
    fit_s, predict_s = fit_t.seconds, pred_t.seconds
    if pred_out:
        np.save(pred_out, pred)
    info = m.solver_info_
    return dict(n_train=X.shape[0], n_test=data.X_test.shape[0], d=d, lam=lam, solver=solver,
                time_s=fit_s, fit_s=fit_s, predict_s=predict_s, **{k: v for k, v in m.times_.items()},
                iterations=info.get("iterations"), residual=info.get("residual"),
                rank=info.get("precond_rank"),
                test_rmse=float(np.sqrt(np.mean((pred - data.y_test) ** 2))),
                sd_y_test=float(np.std(data.y_test)),
                peak_rss_mb=peak_rss_mb())


#: the smallest n_train of --exact: its test set (a third as many rows) has at least 4,
#: whose spread the predictions' difference is divided by
EXACT_MIN_N = 10


def exact_bench(ns, solvers=("cholesky", "cg"), cholesky_max_n=20000, **kw):
    """exact_one for every n and solver, each in its own process (clean peak RSS);
    where both solvers ran, ``pred_diff`` = RMS(cg - Cholesky test predictions) /
    std(y_test)."""
    import json
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            preds = {}
            for solver in solvers:
                if solver == "cholesky" and n > cholesky_max_n:
                    continue
                out = str(Path(tmp) / f"{n}-{solver}.npy")
                arg = json.dumps(dict(kw, n_train=n, solver=solver, pred_out=out))
                p = subprocess.run([sys.executable, "-m", "rffbench.bench", "--exact-one", arg],
                                   capture_output=True, text=True)
                if p.returncode:
                    raise RuntimeError(p.stderr[-2000:])
                row = json.loads(p.stdout.strip().splitlines()[-1])
                preds[solver] = np.load(out, allow_pickle=False)
                rows.append(row)
                print(row, flush=True)
            if len(preds) == 2:
                diff = float(np.sqrt(np.mean((preds["cg"] - preds["cholesky"]) ** 2)))
                for r in rows[-2:]:
                    r["pred_diff"] = diff / r["sd_y_test"] if r["sd_y_test"] > 0 else None
    return rows


def stream_bench(n, d=16, D=1024, lam=1e-3, data_dir=None, in_memory=False):
    """Ridge on D features of the synthetic d-ball data with n rows, read from a .npy
    file (written once, block by block) by ``python run.py dataset=file`` in its own
    process; learning only, exact KRR off.  With ``in_memory`` the same rows come from
    ``dataset=synthetic`` instead (loaded whole), for the memory comparison.  Returns a
    dict of wall time, the learning records' times and the process's peak RSS."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    import pandas as pd

    from .config import DatasetConfig
    from .datasets import write_synthetic_npy

    root = Path(__file__).resolve().parents[1]
    data_dir = Path(data_dir or tempfile.gettempdir())
    path = data_dir / f"rffbench-synthetic-{n}x{d}.npy"
    if not in_memory and not path.exists():
        t0 = time.perf_counter()
        write_synthetic_npy(str(path), DatasetConfig(name="synthetic", n=n, d=d))
        print(f"wrote {path} ({path.stat().st_size / 2**30:.2f} GiB) in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    data = ["dataset=synthetic", f"dataset.n={n}", f"dataset.d={d}"] if in_memory else \
        ["dataset=file", f"dataset.path={path}"]
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, str(root / "run.py"), *data, f"D={D}",
                            f"model.lam={lam}", "measure.approximation.enabled=false",
                            "measure.bounds.enabled=false", "measure.timing.enabled=false",
                            "measure.learning.exact=false", "measure.learning.repeats=1",
                            f"hydra.run.dir={out}"], cwd=root, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode:
            raise RuntimeError(p.stderr[-2000:])
        rec = pd.read_csv(Path(out) / "records.csv")
    r = rec[(rec.measurement == "learning") & (rec.method == "ridge")].set_index("metric")
    return dict(n=n, d=d, D=D, source="in memory" if in_memory else "streamed .npy",
                n_train=int(rec.n_train.iloc[0]), time_s=r.value["train_time_s"], wall_s=wall,
                train_time_s=r.value["train_time_s"], train_split=r.note["train_time_s"],
                predict_time_s=r.value["predict_time_s"],
                test_rel_rmse=r.value["test_rel_rmse"], peak_rss_mb=r.value["peak_rss_mb"])


def dask_bench(n_ridge=1_000_000, n_exact=20_000, d=16, D=1024, workers=2, repeats=3):
    """backend=dask on a LocalCluster (``workers`` processes, 1 thread each) against the
    local path (all cores) in this process: ridge's accumulation on n_ridge synthetic rows
    (D features) and exact KRR by cg on n_exact rows.  Medians of ``repeats`` after a
    warm-up; returns rows with the time of each and the ratio dask / local."""
    from . import backends
    from .config import DatasetConfig
    from .datasets import load_dataset
    from .exact import ExactKRR
    from .features import FEATURE_MAPS
    from .kernels import make_kernel
    from .measure.speed import interleaved
    from .models import FeatureRidge

    data = load_dataset(DatasetConfig(name="synthetic", n=max(n_ridge, n_exact), d=d), seed=0)
    X, y = data.X_train, data.y_train[:, None]
    be = backends.DaskBackend(workers=workers, threads_per_worker=1)
    fmap = FEATURE_MAPS["rff"](n_components=D, random_state=0).fit(X[:n_ridge])
    k = make_kernel("gaussian").fit(X[:n_exact])
    tasks = {
        "ridge": lambda b: FeatureRidge(1e-3, backend=b).fit(fmap, X[:n_ridge], y[:n_ridge]),
        "exact_krr_cg": lambda b: ExactKRR(k, 1e-2, solver="cg", tol=1e-5, random_state=0,
                                           backend=b).fit(X[:n_exact], y[:n_exact]),
    }
    rows = []
    for name, fn in tasks.items():
        res = interleaved({"local": lambda fn=fn: fn(None), "dask": lambda fn=fn: fn(be)},
                          repeats)
        rows.append(dict(task=name, n=n_ridge if name == "ridge" else n_exact,
                         time_s=res["dask"][0], local_s=res["local"][0], dask_s=res["dask"][0],
                         dask_over_local=res["dask"][0] / res["local"][0], workers=workers))
    backends.close_all()
    return rows


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
    from .exact import KernelOperator
    from .kernels import make_kernel

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
    from .experiment import apply_threads
    from .measure.workers import time_in_processes

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


def read_saved(path):
    """A CSV saved by ``--save`` (as text: compared as text), read bounded; BenchError
    naming it otherwise."""
    import pandas as pd

    from .errors import os_error_text
    from .readers import DamagedFile, read_text

    try:
        text = read_text(path, 64 << 20)
        old = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except OSError as exc:
        raise BenchError(os_error_text(exc, "--compare: cannot read the saved CSV")) from None
    except (DamagedFile, ValueError, pd.errors.ParserError) as exc:
        raise BenchError(f"--compare {path}: not a CSV of this benchmark "
                         f"({first_line(exc)})") from None
    if "time_s" not in old.columns:
        raise BenchError(f"--compare {path}: not saved by this benchmark (no time_s column)")
    times = pd.to_numeric(old["time_s"], errors="coerce")
    bad = ~(np.isfinite(times) & (times > 0))
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise BenchError(f"--compare {path}: its time_s column holds {old['time_s'].iloc[i]!r} "
                         f"(row {i + 1}), not a time in seconds: a saved table's times are "
                         "positive numbers")
    return old


def compare(rows, saved):
    """Rows of this run beside a saved CSV of the same benchmark: time ratios new / saved
    on the columns that identify a row (everything but the timings, fractions and notes),
    compared as text (a saved CSV reads empty cells back as NaN, this run has '')."""
    import pandas as pd


    new = pd.DataFrame(rows)
    old = read_saved(saved) if not isinstance(saved, pd.DataFrame) else saved
    measured = ("time", "_s", "fraction", "gflops", "speedup", "over", "rss", "note",
                "residual", "iterations", "rmse", "diff", "first_measurement", "process",
                "unstable", "loads", "machine")
    keys = [c for c in new.columns if c in old.columns and not any(m in c for m in measured)]
    if "time_s" not in old.columns or not keys:
        raise BenchError(f"--compare: not saved by the same benchmark (its columns: "
                         f"{', '.join(list(old.columns)[:8])})")
    left = new.assign(**{k: new[k].map(lambda v: "" if pd.isna(v) else str(v)) for k in keys})
    right = old[keys + ["time_s"]].rename(columns={"time_s": "time_s_saved"})
    right["time_s_saved"] = pd.to_numeric(right["time_s_saved"], errors="coerce")
    both = left.merge(right, on=keys)
    if both.empty:
        raise BenchError("--compare: no row of this run matches a saved row (another "
                         "shape, map, kernel or thread count?)")
    both["new_over_saved"] = both["time_s"] / both["time_s_saved"]
    if not np.isfinite(both["new_over_saved"].to_numpy(dtype=float)).all():
        raise BenchError("--compare: a row of this run has no time to compare (not a number)")
    return both[keys + ["time_s", "time_s_saved", "new_over_saved"]].to_dict("records")


class BenchError(ValueError):
    """A bad flag of the bench: one line naming it (exit 2)."""


def _ints(flag, count=None, lo=1, names=None):
    """argparse type: comma-separated integers >= lo (``count`` of them); ``lo`` may be
    a tuple, one lower end per position (``names``)."""
    los = tuple(lo) if isinstance(lo, tuple) else None

    def parse(text):
        parts = [p.strip() for p in str(text).split(",")]
        try:
            vals = [int(p) for p in parts]
        except ValueError:
            vals = None
        ends = los or (lo,) * len(vals or ())
        if vals is None or (count is not None and len(vals) != count) or \
                any(v < e for v, e in zip(vals, ends)):
            if names and los:
                what = " and ".join(f"{n} >= {e}" for n, e in zip(names, los))
                raise argparse.ArgumentTypeError(
                    f"{flag} {text!r}: use {count} comma-separated integers {','.join(names)}"
                    f" with {what}")
            raise argparse.ArgumentTypeError(
                f"{flag} {text!r}: use {count or 'a list of'} comma-separated "
                f"{','.join(names)} >= {lo}" if names else
                f"{flag} {text!r}: use comma-separated integers >= {lo}")
        return vals
    return parse


def _number(flag, lo=None, hi=None, lo_open=False, hi_open=False, integer=False):
    """argparse type: a finite number in the given range."""
    def parse(text):
        import math

        try:
            v = int(text) if integer else float(text)
        except ValueError:
            v = None
        ok = v is not None and math.isfinite(v) and \
            (lo is None or (v > lo if lo_open else v >= lo)) and \
            (hi is None or (v < hi if hi_open else v <= hi))
        if not ok:
            rng = ((f"> {lo:g}" if lo_open else f">= {lo:g}") if lo is not None else "") + \
                ((" and " if lo is not None else "") + (f"< {hi:g}" if hi_open else
                                                        f"<= {hi:g}") if hi is not None else "")
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: use "
                                             f"{'an integer' if integer else 'a number'} {rng}")
        return v
    return parse


def _names(flag, allowed):
    """argparse type: comma-separated names among ``allowed`` ('' = none)."""
    def parse(text):
        vals = [p.strip() for p in str(text).split(",") if p.strip()]
        bad = [v for v in vals if v not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"{flag} {bad[0]!r} is not one: use comma-"
                                             f"separated names of {', '.join(allowed)}")
        return vals
    return parse


#: the kinds of benchmark (one per run of the command) and the flags only each one reads
KINDS = {
    "shape": ("--shape", "--dtype", "--maps", "--peers"),
    "startup": (),
    "exact": ("--lam", "--tol", "--rank"),
    "stream": ("--in-memory", "--data-dir"),
    "dask": (),
    "products": ("--kernels",),
}
#: the flags that several kinds read, and which (any other kind refuses them)
SHARED_FLAGS = {"--repeats": ("shape", "startup", "dask", "products"),
                "--threads": ("shape", "products"), "--processes": ("shape", "products")}


def _represents(cls, kernel):
    from .errors import ConfigError

    try:
        cls.check_kernel(kernel)
    except ConfigError:
        return False
    return True


def _parser():
    from .features import FEATURE_MAPS
    from .peers import PEERS

    ap = argparse.ArgumentParser(prog="python -m rffbench.bench",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", default=None, type=_ints(
        "--shape", 3, names=("N", "d", "D")),
        help="N,d,D (repeatable); default: 100000,8,1024 and 20000,512,4096")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    dense_gaussian = [m for m, cls in FEATURE_MAPS.builtins().items()
                      if not cls.tags.sparse_output and _represents(cls, "gaussian")]
    ap.add_argument("--maps", default=["rff", "rff_pairs"],
                    type=_names("--maps", dense_gaussian),
                    help="comma-separated rffbench maps (Gaussian kernel), e.g. rff,sorf,fastfood")
    ap.add_argument("--repeats", type=_number("--repeats", lo=1, hi=MAX_REPEATS, integer=True),
                    default=None,
                    help="timed repeats (default 7; --products 5, --dask 3)")
    ap.add_argument("--peers", default=["torch", "jax"],
                    type=_names("--peers", [p for p in PEERS if p != "numpy"]),
                    help="comma-separated peers timed in their own process where installed "
                         "(rffbench.peers); '' = none")
    ap.add_argument("--threads", type=_number("--threads", lo=1, integer=True), default=None)
    ap.add_argument("--processes", type=_number("--processes", lo=1, hi=100, integer=True),
                    default=None,
                    help="fresh worker processes each shape or kernel is timed in, one after "
                         "the other (default 3): every time is the median of their medians")
    ap.add_argument("--out", default=None, help="also write the table as CSV")
    ap.add_argument("--startup", action="store_true",
                    help="time the default `python run.py` cold (empty numba cache) and warm")
    ap.add_argument("--exact", default=None, type=_ints("--exact", lo=EXACT_MIN_N),
                    help="comma-separated n_train: exact KRR by cg and (n <= 20000) Cholesky")
    ap.add_argument("--lam", type=_number("--lam", lo=0, lo_open=True), default=None,
                    help="--exact: ridge lam (default 1e-2)")
    ap.add_argument("--tol", type=_number("--tol", lo=0, hi=1, lo_open=True, hi_open=True),
                    default=None, help="--exact: cg tolerance (default 1e-5)")
    ap.add_argument("--rank", type=_number("--rank", lo=1, integer=True), default=None,
                    help="--exact: preconditioner rank")
    ap.add_argument("--exact-one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--stream", default=None, type=_ints("--stream", lo=10),
                    help="comma-separated n: ridge (D=1024, d=16) on a streamed .npy of n rows")
    ap.add_argument("--in-memory", action="store_true",
                    help="--stream: the same rows as dataset=synthetic, loaded whole")
    ap.add_argument("--data-dir", default=None, help="--stream: where the .npy files go")
    ap.add_argument("--dask", nargs="?", const=[1_000_000, 20_000], default=None,
                    type=_ints("--dask", 2, lo=2, names=("n_ridge", "n_exact")),
                    help="backend=dask on a 2-worker LocalCluster vs the local path: ridge on "
                         "n_ridge rows, exact KRR by cg on n_exact (default 1000000,20000)")
    ap.add_argument("--products", default=None,
                    type=_ints("--products", 2, lo=(2, 1), names=("n", "d")),
                    help="n,d: one exact kernel product per kernel (--kernels) vs its limits")
    ap.add_argument("--kernels", default=None,
                    type=_names("--kernels", list(PRODUCT_KERNELS)),
                    help="--products: comma-separated kernels (default: all)")
    ap.add_argument("--save", default=None, help="write the table as CSV (as --out)")
    ap.add_argument("--compare", default=None,
                    help="a CSV saved by --save: print time ratios new / saved")
    ap.add_argument("--factor", type=_number("--factor", lo=1), default=None,
                    help="--compare: exit 1 if any row is more than this many times slower "
                         "(>= 1)")
    return ap


def _kind(args):
    """The benchmark the flags ask for; BenchError for two at once, or a flag of another."""
    chosen = [k for k, on in (("startup", args.startup), ("exact", args.exact),
                              ("stream", args.stream), ("dask", args.dask),
                              ("products", args.products)) if on]
    if len(chosen) > 1:
        raise BenchError(f"--{chosen[0]} and --{chosen[1]} are two benchmarks: run them one at "
                         "a time")
    kind = chosen[0] if chosen else "shape"
    defaults = {"--shape": None, "--dtype": "float64", "--maps": ["rff", "rff_pairs"],
                "--peers": ["torch", "jax"], "--lam": None, "--tol": None, "--rank": None,
                "--in-memory": False, "--data-dir": None, "--kernels": None}
    for other, flags in KINDS.items():
        for flag in flags:
            if other != kind and getattr(args, flag[2:].replace("-", "_")) != defaults[flag]:
                raise BenchError(f"{flag} has no effect with {_kind_name(kind)}: it is a flag "
                                 f"of {_kind_name(other)}")
    for flag, kinds in SHARED_FLAGS.items():
        if getattr(args, flag[2:]) is not None and kind not in kinds:
            raise BenchError(f"{flag} has no effect with {_kind_name(kind)}: it is a flag of "
                             + ", ".join(_kind_name(k) for k in kinds))
    if args.factor is not None and not args.compare:
        raise BenchError("--factor has no effect without --compare")
    if args.out and args.save and args.out != args.save:
        raise BenchError(f"--out {args.out} and --save {args.save} are the same option (the "
                         "table as CSV): give one of them")
    if args.threads is not None:
        import numba

        if args.threads > numba.config.NUMBA_NUM_THREADS:
            raise BenchError(f"--threads {args.threads}: use 1..{numba.config.NUMBA_NUM_THREADS}"
                             " (numba's pool size, NUMBA_NUM_THREADS)")
    return kind


def _kind_name(kind):
    return "the transform benchmark (--shape)" if kind == "shape" else f"--{kind}"


def _check_memory(kind, args):
    """BenchError naming the flag when the benchmark's arrays cannot fit, before any."""
    from .memory import MEMORY_FRACTION, available_bytes, human

    avail = available_bytes()
    if avail is None:
        return
    budget = MEMORY_FRACTION * avail
    item = 4 if args.dtype == "float32" else 8
    if kind == "shape":
        for N, d, D in args.shape or DEFAULT_SHAPES:
            # X, W, the limit's output, a reused output and each transform's fresh one
            # (and scikit-learn's float64 copy)
            need = item * (N * d + d * D + 3 * N * D) + 8.0 * N * D
            if need > budget:
                raise BenchError(f"--shape {N},{d},{D} needs {human(need)}, more than "
                                 f"{MEMORY_FRACTION:.0%} of the {human(avail)} available: use "
                                 "a smaller N or D")
    elif kind == "products":
        n, d = args.products
        need = 8.0 * (3 * n * d + 3 * n + 2 * 3000 * 3000) + 4.0 * 2 * 3000 * 3000
        if need > budget:
            raise BenchError(f"--products {n},{d} needs {human(need)}, more than "
                             f"{MEMORY_FRACTION:.0%} of the {human(avail)} available")
    elif kind == "exact":
        from .exact import default_rank

        for n in args.exact:
            r = args.rank or default_rank(n)
            chol = 8.0 * n * n if n <= 20000 else 0.0
            need = max(chol, 8.0 * (n * 16 * 3 + 2 * n * min(r, n) + 16 * n))
            if need > budget:
                raise BenchError(f"--exact {n} needs {human(need)}, more than "
                                 f"{MEMORY_FRACTION:.0%} of the {human(avail)} available")
    elif kind == "dask":
        n_ridge, n_exact = args.dask
        n = max(n_ridge, n_exact)
        # the synthetic data (3.5 copies while loading), ridge's 3 D x D matrices and a chunk
        # per worker, the cg data and preconditioner
        need = 3.5 * 8.0 * n * 17 + 8.0 * (3 * 1024 * 1024 + 2 * 4096 * 1024) \
            + 8.0 * (2 * n_exact * 16 + 2 * n_exact * min(n_exact, 2000))
        if need > budget:
            raise BenchError(f"--dask {n_ridge},{n_exact} needs {human(need)}, more than "
                             f"{MEMORY_FRACTION:.0%} of the {human(avail)} available")
    elif kind == "stream" and not args.in_memory:
        import shutil
        import tempfile

        where = args.data_dir or tempfile.gettempdir()
        try:
            free = shutil.disk_usage(where).free
        except OSError as exc:
            raise BenchError(f"--data-dir {where}: {exc.strerror or exc}") from None
        need = sum(8.0 * n * 17 for n in args.stream)
        if need > 0.9 * free:
            raise BenchError(f"--stream {','.join(map(str, args.stream))} writes {human(need)} "
                             f"of .npy files into {where}, which has {human(free)} free: use "
                             "fewer rows or another --data-dir")


def main(argv=None):
    import sys

    from .cli import check_cwd

    check_cwd("python -m rffbench.bench")
    args = _parser().parse_args(argv)
    try:
        kind = _kind(args)
        _check_memory(kind, args)
        saved = read_saved(args.compare) if args.compare else None
        df = _run(kind, args)
    except BenchError as exc:
        print(f"python -m rffbench.bench: error: {exc}", file=sys.stderr)
        return 2
    except RffbenchError as exc:  # a refusal from rffbench itself (config, memory)
        print(f"python -m rffbench.bench: error: {first_line(exc)}", file=sys.stderr)
        return 2
    if df is None:
        return 0
    out = args.out or args.save
    if out:
        from .errors import os_error_text
        from .results import write_atomic

        try:
            write_atomic(df, out)
        except OSError as exc:
            print(f"python -m rffbench.bench: error: {os_error_text(exc, 'cannot write --save')}",
                  file=sys.stderr)
            return 2
    if args.compare:
        try:
            cmp = _show(compare(df.to_dict("records"), saved))
        except BenchError as exc:
            print(f"python -m rffbench.bench: error: {exc}", file=sys.stderr)
            return 2
        slow = cmp[cmp.new_over_saved > args.factor] if args.factor else cmp.iloc[:0]
        if len(slow):
            print(f"{len(slow)} row(s) more than {args.factor:g}x slower than {args.compare}")
            return 1
    return 0


def _run(kind, args):
    """The rows of benchmark ``kind`` for the checked ``args``, shown; a DataFrame with a
    ``time_s`` column (each row's main time), or None (--exact-one prints its JSON)."""
    if args.exact_one:
        import json

        print(json.dumps(exact_one(**json.loads(args.exact_one))))
        return None
    if kind == "products":
        n, d = args.products
        return _show(products_bench(n, d, tuple(args.kernels or PRODUCT_KERNELS),
                                    args.repeats or 5, args.threads, args.processes or 3))
    if kind == "dask":
        n_ridge, n_exact = args.dask
        return _show(dask_bench(n_ridge=n_ridge, n_exact=n_exact, repeats=args.repeats or 3))
    if kind == "stream":
        return _show([stream_bench(v, data_dir=args.data_dir, in_memory=args.in_memory)
                      for v in args.stream])
    if kind == "exact":
        return _show(exact_bench(args.exact, lam=args.lam or 1e-2, tol=args.tol or 1e-5,
                                 rank=args.rank))
    if kind == "startup":
        return _show(startup(repeats=args.repeats or 3))
    from .experiment import apply_threads

    threads = apply_threads(args.threads)
    rows = []
    for N, d, D in args.shape or DEFAULT_SHAPES:
        rows += bench_shape(N, d, D, args.dtype, args.repeats or 7, maps=tuple(args.maps),
                            peers=tuple(args.peers), processes=args.processes or 3,
                            threads=threads)
    cols = ["N", "d", "D", "dtype", "threads", "impl", "time_s", "spread_s",
            "process_medians", "process_ratio", "unstable", "speedup_vs_sklearn",
            "fraction_of_limit", "first_touch_s", "note", "loads", "machine"]
    return _show([{c: r.get(c) for c in cols} for r in rows])


def _show(rows):
    """Print a benchmark's rows as a table; the DataFrame."""
    import pandas as pd

    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.precision", 4,
                           "display.max_colwidth", 90):
        print(df.to_string(index=False))
    return df


if __name__ == "__main__":
    raise SystemExit(main())
