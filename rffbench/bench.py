"""Transform benchmark: rffbench maps vs scikit-learn RBFSampler vs the machine's limit.

    python -m rffbench.bench                       # the two reference shapes
    python -m rffbench.bench --shape 50000,16,2048 --dtype float32 --out bench.csv
    python -m rffbench.bench --maps rff,rff_pairs,sorf,fastfood --shape 10000,1024,8192
    python -m rffbench.bench --startup             # cold / warm `python run.py`
    python -m rffbench.bench --exact 10000,100000  # exact KRR: cg vs Cholesky, time, RSS
    python -m rffbench.bench --stream 10000000     # ridge on a streamed .npy: time, peak RSS
    python -m rffbench.bench --dask                # backend=dask (LocalCluster) vs local
    python -m rffbench.bench --products 12000,16   # exact kernel products vs their limit
    python -m rffbench.bench --products 12000,16 --save a.csv   # ... later, another commit:
    python -m rffbench.bench --products 12000,16 --compare a.csv  # time ratios new / saved

The full speed experiment (records, report figures) is ``python run.py -m
experiment=speed``; this script is the quick check.

For each shape (N, d, D), in one process and interleaved (A B C A B C ...),
after a warm-up call of each: the transform of every rffbench map in ``--maps``
(Gaussian kernel; default ``rff`` and ``rff_pairs``),
scikit-learn ``RBFSampler.transform`` (same Gaussian kernel, same D), and the
*limit*: a BLAS GEMM of the same shape into a preallocated output plus one
streaming pass over that output (numba ``scale_inplace``).  Medians of
``--repeats`` repeats; ratios are computed within the run, so they are
meaningful on a noisy shared machine where absolute times are not.
"""
from __future__ import annotations

import argparse
import time

import rffbench  # noqa: F401  (thread-pool env defaults before numpy loads)

import numpy as np

DEFAULT_SHAPES = [(100_000, 8, 1024), (20_000, 512, 4096)]


def bench_shape(N, d, D, dtype="float64", repeats=7, seed=0, maps=("rff", "rff_pairs"),
                peers=()):
    """Median seconds per implementation for one shape -> dict name -> (median, spread[,
    note]).  ``rff_out``: rff's transform into a reused buffer; each of ``peers``
    (rffbench.peers) in its own process with rff's W and b, with a fresh output per call
    (``torch``) and into a reused buffer (``torch_out``)."""
    import numba
    from sklearn.kernel_approximation import RBFSampler

    from . import _numba as nbk
    from .features import FEATURE_MAPS
    from .kernels import Gaussian
    from .measure.speed import interleaved
    from .peers import time_peer_outputs

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d)).astype(dtype)
    ls = float(np.sqrt(d))
    kernel = Gaussian(lengthscale=ls)
    fitted = {m: FEATURE_MAPS[m](kernel=kernel, n_components=D, random_state=seed).fit(X)
              for m in maps}
    sk = RBFSampler(gamma=0.5 / ls**2, n_components=D, random_state=seed).fit(X)
    W = rng.standard_normal((d, D)).astype(dtype)
    out = np.empty((N, D), dtype=dtype)

    def limit_gemm():
        np.matmul(X, W, out=out)

    def limit_pass():
        nbk.scale_inplace(out, 1.0)

    impls = {m: (lambda f=f: f.transform(X)) for m, f in fitted.items()}
    if "rff" in fitted and peers:
        reused = np.empty((N, D), dtype=dtype)
        impls["rff_out"] = lambda: fitted["rff"].transform(X, out=reused)
    impls.update(sklearn_rbf=lambda: sk.transform(X), gemm=limit_gemm, **{"pass": limit_pass})
    res = interleaved(impls, repeats)
    res["limit"] = (res["gemm"][0] + res["pass"][0], res["gemm"][1] + res["pass"][1])
    if "rff" in fitted:
        Wr = fitted["rff"].random_weights_.astype(dtype)
        br = fitted["rff"].random_offset_.astype(dtype)
        for peer in peers:
            for output, t, spread, note in time_peer_outputs(peer, X, Wr, br,
                                                             numba.get_num_threads(), repeats):
                res[peer + ("_out" if output == "out" else "")] = (t, spread, note)
    return res


def startup(repeats=3):
    """Wall time of the default ``python run.py``, cold (empty numba cache) and warm
    (cache hit), and the recorded time to its first measurement (startup_time_s).
    Returns speed-vocabulary rows: method startup/cold | startup/warm."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parents[1]
    rows = []

    def one(env, out):
        t = time.perf_counter()
        p = subprocess.run([sys.executable, str(root / "run.py"), f"hydra.run.dir={out}"],
                           cwd=root, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if p.returncode:
            raise RuntimeError(p.stderr[-2000:])
        rec = pd.read_csv(Path(out) / "records.csv")
        first = rec[rec.metric == "startup_time_s"].value
        return wall, float(first.iloc[0]) if len(first) else float("nan")

    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("cold", "warm"):
            walls, firsts = [], []
            for r in range(repeats):
                cache = Path(tmp) / (f"cache-cold-{r}" if kind == "cold" else "cache-warm")
                env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
                if kind == "warm" and r == 0:
                    one(env, Path(tmp) / "prime")  # fill the warm cache once
                w, f = one(env, Path(tmp) / f"{kind}-{r}")
                walls.append(w)
                firsts.append(f)
            rows.append(dict(method=f"startup/{kind}", metric="time_s",
                             value=float(np.median(walls)), spread=max(walls) - min(walls),
                             first_measurement_s=float(np.median(firsts)), n_repeats=repeats))
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
    kernel.gram(X[:8])  # numba warm-up
    t0 = time.perf_counter()
    m = ExactKRR(kernel, lam, solver=solver, tol=tol, precond_rank=rank, random_state=seed)
    m.fit(X, y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = m.predict(data.X_test)
    predict_s = time.perf_counter() - t0
    if pred_out:
        np.save(pred_out, pred)
    info = m.solver_info_
    return dict(n_train=X.shape[0], n_test=data.X_test.shape[0], d=d, lam=lam, solver=solver,
                fit_s=fit_s, predict_s=predict_s, **{k: v for k, v in m.times_.items()},
                iterations=info.get("iterations"), residual=info.get("residual"),
                rank=info.get("precond_rank"),
                test_rmse=float(np.sqrt(np.mean((pred - data.y_test) ** 2))),
                sd_y_test=float(np.std(data.y_test)),
                peak_rss_mb=peak_rss_mb())


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
                    r["pred_diff"] = diff / r["sd_y_test"]
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
                n_train=int(rec.n_train.iloc[0]), wall_s=wall,
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
                         local_s=res["local"][0], dask_s=res["dask"][0],
                         dask_over_local=res["dask"][0] / res["local"][0], workers=workers))
    backends.close_all()
    return rows


#: the kernels of --products and the elementwise numpy operation(s) that stand for
#: their transcendental part in the measured limit (per pair; "d x" = per coordinate)
PRODUCT_KERNELS = {
    "gaussian": ("exp",), "laplacian": ("exp",), "matern": ("sqrt", "exp"),
    "cauchy": ("d x divide",), "arccos1": ("arccos", "sqrt"), "polynomial": (),
    "additive_chi2": ("d x divide",), "skewed_chi2": ("d x exp", "d x divide"),
}


def _elementwise_seconds(op, threads, n=1 << 16, repeats=50):
    """Seconds per element of numpy's (SIMD where numpy has it) ``op`` on an in-cache
    float64 buffer, divided by the threads: the machine's rate for that function."""
    x = np.random.default_rng(0).uniform(0.01, 0.99, n)
    out = np.empty_like(x)
    from .measure.speed import interleaved

    fn = {"exp": lambda: np.exp(-x, out=out), "sqrt": lambda: np.sqrt(x, out=out),
          "arccos": lambda: np.arccos(x, out=out),
          "divide": lambda: np.divide(1.0, x, out=out)}[op]
    return interleaved({op: fn}, repeats)[op][0] / n / threads


def products_bench(n=12000, d=16, kernels=tuple(PRODUCT_KERNELS), repeats=5, threads=None):
    """One exact kernel product K V (V: n x 1) per kernel: the fused numba product in
    float64 and mixed precision and the tile-by-tile Python path, against two limits.

    * ``limit_s`` (the flop count): n^2 / 2 pairs x (2d + 2 + 10) flops at this run's
      large-DGEMM rate (2d for the distance, 2 for the multiply-add, about 10 for a
      vectorised exp; mixed: at the SGEMM rate);
    * ``measured_limit_s``: n^2 / 2 pairs x (2d + 4) flops at the GEMM rate plus the kernel's
      transcendental part (PRODUCT_KERNELS) at numpy's rate for it on this machine.
    Fractions are limit / measured (1 = at the limit)."""
    from .experiment import apply_threads
    from .exact import KernelOperator
    from .kernels import make_kernel
    from .measure.speed import interleaved

    threads = apply_threads(threads)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    V = rng.standard_normal((n, 1))
    A = rng.standard_normal((3000, 3000))
    A32 = A.astype(np.float32)
    C, C32 = np.empty_like(A), np.empty_like(A32)
    rates = interleaved({"d": lambda: np.matmul(A, A, out=C),
                         "s": lambda: np.matmul(A32, A32, out=C32)}, 5)
    rate = {"float64": 2 * 3000**3 / rates["d"][0], "mixed": 2 * 3000**3 / rates["s"][0]}
    pairs = n * n / 2.0
    rows = []
    for name in kernels:
        Xk = np.abs(X) if name in ("additive_chi2", "skewed_chi2") else X  # their domain
        k = make_kernel(name).fit(Xk)
        ops = {"float64": KernelOperator(k, Xk), "mixed": KernelOperator(k, Xk, precision="mixed"),
               "python_tiles": KernelOperator(k, Xk, fused=False)}
        res = interleaved({key: (lambda op=op: op.matvec(V)) for key, op in ops.items()},
                          repeats)
        trans = sum(_elementwise_seconds(op.split(" x ")[-1], threads)
                    * (d if op.startswith("d x") else 1) for op in PRODUCT_KERNELS[name])
        for impl, (t, spread) in res.items():
            prec = "mixed" if impl == "mixed" else "float64"
            lim = pairs * (2 * d + 2 + 10) / rate[prec]
            mlim = pairs * ((2 * d + 4) / rate[prec] + trans / (2 if prec == "mixed" else 1))
            rows.append(dict(kernel=name, n=n, d=d, impl=impl, threads=threads, time_s=t,
                             spread_s=spread, gemm_gflops=rate[prec] / 1e9, limit_s=lim,
                             fraction_of_limit=lim / t, measured_limit_s=mlim,
                             fraction_of_measured_limit=mlim / t))
    return rows


def compare(rows, saved):
    """Rows of this run beside a saved CSV of the same benchmark: time ratios new / saved
    on the columns that identify a row (everything but the timings and fractions)."""
    import pandas as pd

    new, old = pd.DataFrame(rows), pd.read_csv(saved)
    measured = ("time", "_s", "fraction", "gflops", "speedup", "over")
    keys = [c for c in new.columns if c in old.columns and not any(m in c for m in measured)]
    both = new.merge(old[keys + ["time_s"]], on=keys, suffixes=("", "_saved"))
    both["new_over_saved"] = both["time_s"] / both["time_s_saved"]
    return both[keys + ["time_s", "time_s_saved", "new_over_saved"]].to_dict("records")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", default=None,
                    help="N,d,D (repeatable); default: 100000,8,1024 and 20000,512,4096")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--maps", default="rff,rff_pairs",
                    help="comma-separated rffbench maps (Gaussian kernel), e.g. rff,sorf,fastfood")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--peers", default="torch,jax",
                    help="comma-separated peers timed in their own process where installed "
                         "(rffbench.peers); '' = none")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=None, help="also write the table as CSV")
    ap.add_argument("--startup", action="store_true",
                    help="time the default `python run.py` cold (empty numba cache) and warm")
    ap.add_argument("--exact", default=None,
                    help="comma-separated n_train: exact KRR by cg and (n <= 20000) Cholesky")
    ap.add_argument("--lam", type=float, default=1e-2, help="--exact: ridge lam")
    ap.add_argument("--tol", type=float, default=1e-5, help="--exact: cg tolerance")
    ap.add_argument("--rank", type=int, default=None, help="--exact: preconditioner rank")
    ap.add_argument("--exact-one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--stream", default=None,
                    help="comma-separated n: ridge (D=1024, d=16) on a streamed .npy of n rows")
    ap.add_argument("--in-memory", action="store_true",
                    help="--stream: the same rows as dataset=synthetic, loaded whole")
    ap.add_argument("--data-dir", default=None, help="--stream: where the .npy files go")
    ap.add_argument("--dask", action="store_true",
                    help="backend=dask on a 2-worker LocalCluster vs the local path")
    ap.add_argument("--products", default=None,
                    help="n,d: one exact kernel product per kernel (--kernels) vs its limits")
    ap.add_argument("--kernels", default=",".join(PRODUCT_KERNELS),
                    help="--products: comma-separated kernels")
    ap.add_argument("--save", default=None, help="write the table as CSV (as --out)")
    ap.add_argument("--compare", default=None,
                    help="a CSV saved by --save: print time ratios new / saved")
    ap.add_argument("--factor", type=float, default=None,
                    help="--compare: exit 1 if any row is more than this many times slower")
    args = ap.parse_args(argv)
    args.out = args.out or args.save
    if args.compare:
        import sys

        rest = list(argv if argv is not None else sys.argv[1:])
        for flag in ("--compare", "--factor"):
            if flag in rest:
                i = rest.index(flag)
                del rest[i:i + 2]
        df = _show(compare(main(rest).to_dict("records"), args.compare))
        slow = df[df.new_over_saved > args.factor] if args.factor else df.iloc[:0]
        if len(slow):
            print(f"{len(slow)} row(s) more than {args.factor:g}x slower than {args.compare}")
            sys.exit(1)
        return df
    if args.products:
        n, d = (int(v) for v in args.products.split(","))
        return _show(products_bench(n, d, tuple(args.kernels.split(",")), args.repeats
                                    if args.repeats != 7 else 5, args.threads), args.out)
    if args.exact_one:
        import json

        print(json.dumps(exact_one(**json.loads(args.exact_one))))
        return None
    if args.dask:
        return _show(dask_bench(repeats=args.repeats if args.repeats != 7 else 3), args.out)
    if args.stream:
        return _show([stream_bench(int(v), data_dir=args.data_dir, in_memory=args.in_memory)
                      for v in args.stream.split(",")], args.out)
    if args.exact:
        return _show(exact_bench([int(v) for v in args.exact.split(",")], lam=args.lam,
                                 tol=args.tol, rank=args.rank), args.out)
    if args.startup:
        return _show(startup(), args.out)
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shape] if args.shape \
        else DEFAULT_SHAPES
    from .experiment import apply_threads

    threads = apply_threads(args.threads)
    rows = []
    peers = tuple(p for p in args.peers.split(",") if p)
    for N, d, D in shapes:
        maps = tuple(args.maps.split(","))
        r = bench_shape(N, d, D, args.dtype, args.repeats, maps=maps, peers=peers)
        for name, (t, spread, *note) in r.items():
            if name in ("gemm", "pass", "limit"):
                continue
            ours = name in maps or name == "rff_out"
            dense = name in ("rff", "rff_out")  # the limit: the dense map's GEMM + one pass
            rows.append(dict(N=N, d=d, D=D, dtype=args.dtype, threads=threads, impl=name,
                             time_s=t, spread_s=spread,
                             speedup_vs_sklearn=r["sklearn_rbf"][0] / t if t else None,
                             fraction_of_limit=r["limit"][0] / t if dense else None,
                             note=note[0] if note else ("own process" if not ours and
                                                        name != "sklearn_rbf" else "")))
    return _show(rows, args.out)


def _show(rows, out=None):
    """Print a benchmark's rows as a table (and write them to ``out`` as CSV)."""
    import pandas as pd

    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.precision", 4,
                           "display.max_colwidth", 90):
        print(df.to_string(index=False))
    if out:
        from .results import write_atomic

        write_atomic(df, out)
    return df


if __name__ == "__main__":
    main()
