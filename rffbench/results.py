"""The record schema (DESIGN.md section 3) and atomic writing.

One row per (run, measurement, metric[, method]): identifying columns, then
``measurement, metric, method, value, unit, spread, n_repeats, note``, then
the environment.  Primitive values only; CSV written to a temporary file in
the same directory and renamed, so a reader never sees half a file.
"""
from __future__ import annotations

import datetime as _dt
import os
import subprocess
from pathlib import Path

RECORDS_FILE = "records.csv"
#: a failed job of a sweep leaves its one-line reason here (instead of records)
ERROR_FILE = "error.txt"
#: per-trial values of the bounds measurement, next to records.csv
TRIALS_FILE = "bounds_trials.csv"
#: bump when the columns or the meaning of a metric change
SCHEMA_VERSION = 2

IDENTITY_COLUMNS = ["run_id", "experiment", "dataset", "task", "n_train", "n_test", "d", "kernel",
                    "nu", "lengthscale", "features", "D", "n_freq", "n_columns", "seed", "dtype",
                    "threads"]
#: ``delta``: failure probability a value refers to (bounds); ``dist``: ||x - y|| of
#: the pair a pointwise value refers to (bounds); empty elsewhere
MEASURE_COLUMNS = ["measurement", "metric", "method", "value", "unit", "spread", "n_repeats",
                   "delta", "dist", "note"]
ENV_COLUMNS = ["schema", "rffbench", "numba", "numpy", "scipy", "sklearn", "runtime_env", "date",
               "git_sha"]
COLUMNS = IDENTITY_COLUMNS + MEASURE_COLUMNS + ENV_COLUMNS


def _num(v):
    return None if v is None else float(v)


def record(measurement, metric, value, unit="", method="", spread=None, n_repeats=None,
           delta=None, dist=None, note=""):
    """One measured value (``value`` None = not available; say why in ``note``)."""
    return dict(measurement=measurement, metric=metric, method=method, value=_num(value),
                unit=unit, spread=_num(spread), n_repeats=n_repeats, delta=_num(delta),
                dist=_num(dist), note=note)


def environment():
    import numba
    import numpy
    import scipy
    import sklearn

    from . import __version__, runtime_env

    return dict(schema=SCHEMA_VERSION, rffbench=__version__, numba=numba.__version__,
                numpy=numpy.__version__, scipy=scipy.__version__, sklearn=sklearn.__version__,
                runtime_env=runtime_env(), date=_dt.datetime.now().isoformat(timespec="seconds"),
                git_sha=git_sha())


def git_sha():
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def records_frame(identity, rows, env=None):
    """DataFrame of the long format with the columns in schema order."""
    import pandas as pd

    env = environment() if env is None else env
    df = pd.DataFrame([{**identity, **r, **env} for r in rows], columns=COLUMNS)
    return df


def write_atomic(df, path):
    """Write a DataFrame as CSV via temp file + rename (never half-written)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        df.to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path
