"""``--exact``: exact KRR by cg and Cholesky, each fit in a fresh process (time, peak RSS,
the two solvers' predictions against each other)."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..clock import clean_call
from ..config import DatasetConfig
from ..datasets import load_dataset
from ..exact import ExactKRR
from ..kernels import make_kernel
from ..measure.learning import peak_rss_mb


def exact_one(n_train, solver, d=16, lam=1e-2, tol=1e-5, rank=None, seed=0, pred_out=None):
    """One exact-KRR fit on the synthetic regression data of the learning preset (d-ball,
    n_train training rows, noise 0.1, standardised), in this process: a dict of times,
    solver info, test RMSE and the process's peak RSS (run it in a fresh process)."""

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
                time_s=fit_s, fit_s=fit_s, predict_s=predict_s, **dict(m.times_),
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
