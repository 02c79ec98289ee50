"""Transform benchmark: rffbench maps vs scikit-learn RBFSampler vs the machine's limit.

    python -m rffbench.bench                       # the two reference shapes
    python -m rffbench.bench --shape 50000,16,2048 --dtype float32 --out bench.csv
    python -m rffbench.bench --maps rff,rff_pairs,sorf,fastfood --shape 10000,1024,8192
    python -m rffbench.bench --startup             # cold / warm `python run.py`

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


def bench_shape(N, d, D, dtype="float64", repeats=7, seed=0, maps=("rff", "rff_pairs")):
    """Median seconds per implementation for one shape -> dict name -> (median, spread)."""
    from sklearn.kernel_approximation import RBFSampler

    from . import _numba as nbk
    from .features import FEATURE_MAPS
    from .kernels import Gaussian
    from .measure.speed import interleaved

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
    impls.update(sklearn_rbf=lambda: sk.transform(X), gemm=limit_gemm, **{"pass": limit_pass})
    res = interleaved(impls, repeats)
    res["limit"] = (res["gemm"][0] + res["pass"][0], res["gemm"][1] + res["pass"][1])
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", default=None,
                    help="N,d,D (repeatable); default: 100000,8,1024 and 20000,512,4096")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--maps", default="rff,rff_pairs",
                    help="comma-separated rffbench maps (Gaussian kernel), e.g. rff,sorf,fastfood")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=None, help="also write the table as CSV")
    ap.add_argument("--startup", action="store_true",
                    help="time the default `python run.py` cold (empty numba cache) and warm")
    args = ap.parse_args(argv)
    if args.startup:
        import pandas as pd

        df = pd.DataFrame(startup())
        print(df.to_string(index=False))
        if args.out:
            from .results import write_atomic

            write_atomic(df, args.out)
        return df
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shape] if args.shape \
        else DEFAULT_SHAPES
    from .experiment import apply_threads

    threads = apply_threads(args.threads)
    rows = []
    for N, d, D in shapes:
        maps = tuple(args.maps.split(","))
        r = bench_shape(N, d, D, args.dtype, args.repeats, maps=maps)
        for name in maps:
            rows.append(dict(N=N, d=d, D=D, dtype=args.dtype, threads=threads, impl=name,
                             time_s=r[name][0], spread_s=r[name][1],
                             sklearn_time_s=r["sklearn_rbf"][0], limit_time_s=r["limit"][0],
                             speedup_vs_sklearn=r["sklearn_rbf"][0] / r[name][0],
                             speedup_vs_rff=(r["rff"][0] / r[name][0]) if "rff" in r else None,
                             time_over_limit=r[name][0] / r["limit"][0]))
    import pandas as pd

    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.precision", 4):
        print(df.to_string(index=False))
    if args.out:
        from .results import write_atomic

        write_atomic(df, args.out)
    return df


if __name__ == "__main__":
    main()
