"""``--startup``: the default ``python run.py`` cold (empty numba cache) and warm."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def default_runs(repeats=3):
    """The default ``python run.py`` run ``repeats`` times cold (an empty numba cache:
    every compiled function the run needs is compiled) and as often warm (loaded from the
    cache the cold run before it filled), interleaved (cold, warm, cold, ...), each in its
    own process and temporary run directory.  Returns {"cold": [...], "warm": [...]} of
    dicts: wall (s, the whole command), startup (its recorded time to the first
    measurement, startup_time_s), compile (numba's compile or load time, compile_time_s)
    and log (what it printed, stdout and stderr in order, its run directory written as
    ``RUN_DIR``)."""
    root = Path(__file__).resolve().parents[2]

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
        for r in range(repeats):  # each warm run loads what the cold run before it compiled
            env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / f"cache-{r}"))
            runs["cold"].append(one(env, Path(tmp) / f"cold-{r}"))
            runs["warm"].append(one(env, Path(tmp) / f"warm-{r}"))
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
