"""The record schema (docs/architecture.md, "Contracts") and atomic writing.

One row per (run, measurement, metric[, method]): identifying columns, then
``measurement, metric, method, value, unit, spread, n_repeats, note``, then
the environment.  Primitive values only; CSV written to a temporary file in
the same directory and renamed, so a reader never sees half a file.
"""
from __future__ import annotations

import datetime as _dt
import logging
import math
import os
import subprocess
import threading
from pathlib import Path

from . import compat

log = logging.getLogger(__name__)

RECORDS_FILE = "records.csv"
#: a failed job of a sweep leaves its one-line reason here (instead of records)
ERROR_FILE = "error.txt"
#: per-trial values of the bounds measurement, next to records.csv
TRIALS_FILE = "bounds_trials.csv"
#: per-redraw values of the approximation measurement (measure.approximation.redraws > 1)
REDRAWS_FILE = "approximation_redraws.csv"
#: per-pair values of the variance measurement
VARIANCE_FILE = "variance_pairs.csv"
#: per-redraw values of the posterior measurement (measure.posterior.redraws > 1)
POSTERIOR_FILE = "posterior_redraws.csv"
#: bump when the columns or the meaning of a metric change (3: cpu and blas columns; records
#: of a sweep live in runs/<run_id>/ next to config.json; 4: kernel_params, every parameter
#: of the kernel as NAME=value; 5: device; older versions: rffbench.compat)
SCHEMA_VERSION = 5

#: ``kernel_params``: the kernel's own parameters beyond the lengthscale, ``nu=1.5``,
#: ``coef0=1,degree=2`` (empty for a kernel without any); ``nu`` repeats matern's for
#: records of every version; ``device``: where the map's transforms and exact KRR's
#: products ran (cpu, cuda; cpu for every record before schema 5)
IDENTITY_COLUMNS = ["run_id", "experiment", "dataset", "task", "n_train", "n_test", "d", "kernel",
                    "nu", "kernel_params", "lengthscale", "features", "D", "n_freq",
                    "n_columns", "seed", "dtype", "threads", "device"]
#: ``delta``: failure probability a value refers to (bounds); ``dist``: ||x - y|| of
#: the pair a pointwise value refers to (bounds); empty elsewhere
MEASURE_COLUMNS = ["measurement", "metric", "method", "value", "unit", "spread", "n_repeats",
                   "delta", "dist", "note"]
ENV_COLUMNS = ["schema", "rffbench", "numba", "numpy", "scipy", "sklearn", "runtime_env", "cpu",
               "blas", "date", "git_sha"]
COLUMNS = IDENTITY_COLUMNS + MEASURE_COLUMNS + ENV_COLUMNS


def params_text(params):
    """A kernel's own parameters as the ``kernel_params`` column spells them: ``NAME=value``
    sorted by name, comma-separated (numbers as %g); None where there are none."""
    def text(v):
        return f"{v:g}" if isinstance(v, float) else str(v)

    return ",".join(f"{k}={text(v)}" for k, v in sorted(params.items())) or None


def _num(v):
    return None if v is None else float(v)


def record(measurement, metric, value, unit="", method="", spread=None, n_repeats=None,
           delta=None, dist=None, note="", infinite=False, blas=None):
    """One measured value (``value`` None = not available; say why in ``note``).

    ``blas``: the BLAS that ran it where that is not this process's (a timing worker's, a
    peer's: :func:`rffbench.clock.blas_info` there), in place of the environment's ``blas`` column.

    A value that is not a finite number (an overflow, 0/0) is never recorded as one: it
    becomes n/a with the reason in its note, as do a non-finite spread or distance;
    ``infinite=True`` lets a value that is infinite by definition (sigma_p^2 of a
    heavy-tailed spectral density) through, +inf only."""
    v = _num(value)
    if v is not None and not math.isfinite(v) and not (infinite and v == math.inf):
        log.warning("%s/%s%s: %r is not a finite number: recorded as n/a", measurement, metric,
                    f" ({method})" if method else "", v)
        note = f"n/a: the value computed was {v!r}, not a finite number" + \
            (f" ({note})" if note else "")
        v = None
    spread, dist = _num(spread), _num(dist)
    spread = spread if spread is None or math.isfinite(spread) else None
    if dist is not None and not math.isfinite(dist):
        raise ValueError(f"{measurement}/{metric}: a pair at distance {dist!r}")
    out = dict(measurement=measurement, metric=metric, method=method, value=v,
               unit=unit, spread=spread, n_repeats=n_repeats, delta=_num(delta),
               dist=dist, note=note)
    if blas:
        out["blas"] = blas
    return out


_STATIC_ENV = {}


def environment():
    """The environment columns of a record (the static part computed once per process)."""
    if not _STATIC_ENV:
        import numba
        import numpy
        import scipy
        import sklearn

        from . import __version__

        _STATIC_ENV.update(schema=SCHEMA_VERSION, rffbench=__version__, numba=numba.__version__,
                           numpy=numpy.__version__, scipy=scipy.__version__,
                           sklearn=sklearn.__version__, cpu=cpu_name(), git_sha=git_sha())
    from . import runtime_env
    from .clock import blas_info, machine_text

    # what decides a timing besides the code: thread pools, huge pages, free page reporting
    return dict(_STATIC_ENV, runtime_env=f"{runtime_env()};{machine_text()}", blas=blas_info(),
                date=_dt.datetime.now().isoformat(timespec="seconds"))


def cpu_name():
    """CPU model and logical core count, e.g. ``AMD EPYC (2 cores)``."""
    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if not model:
        import platform

        model = platform.processor() or platform.machine()
    return f"{model} ({os.cpu_count()} logical cores)"


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
    # a record's own blas (a worker's, a peer's) in place of this process's
    df = pd.DataFrame([{**identity, **env, **r} for r in rows], columns=COLUMNS)
    return df


def write_file_atomic(path, write):
    """``write(tmp)`` into a temporary file beside ``path``, then rename it onto ``path``:
    readers never see half a file; an OSError (full disk, ...) names ``path`` and leaves
    nothing behind."""
    return write_all_atomic([(write, path)])[0]


def write_atomic(df, path):
    """Write a DataFrame as CSV via temp file + rename (never half-written)."""
    return write_all_atomic([(df, path)])[0]


def write_all_atomic(items):
    """Write several files all or none: each (DataFrame -> CSV, str -> text, or a callable
    ``write(tmp)``) to a temporary file first, then all renamed in the given order (put the
    file whose presence means complete last).  A failed write removes the temporary files
    and raises OSError naming the file."""
    tmps = []
    try:
        for obj, path in items:
            path = Path(path)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmps.append((tmp, path))
            try:
                if callable(obj):
                    obj(tmp)
                elif isinstance(obj, str):
                    tmp.write_text(obj)
                else:
                    obj.to_csv(tmp, index=False)
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        for tmp, path in tmps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in tmps:
            if tmp.exists():
                tmp.unlink()
    return [path for _, path in tmps]


#: columns that must parse as numbers (empty allowed)
NUMERIC_COLUMNS = ["n_train", "n_test", "d", "nu", "lengthscale", "D", "n_freq", "n_columns",
                   "seed", "threads", "value", "spread", "n_repeats", "delta", "dist", "schema"]
#: older schema versions whose records are "outdated" (run again), not damaged
OLD_SCHEMAS = compat.OUTDATED_SCHEMAS
#: the columns of every older schema read (rffbench.compat), newest first: version -> columns
OLDER_COLUMNS = {v: compat.columns_of(v, COLUMNS)
                 for v in range(SCHEMA_VERSION - 1, compat.OLDEST_READ - 1, -1)}


class DamagedRecords(ValueError):
    """A records file that cannot be trusted; ``status`` is damaged or outdated."""

    def __init__(self, path, reason, status="damaged"):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.status = path, reason, status


def read_records(path, run_id=None):
    """Read and check one records file; :class:`DamagedRecords` says why it is unusable.

    Checks: the file ends with a newline (a cut file does not), the header is
    this schema's, every row has every field, numeric columns are numbers,
    ``schema`` is this version, and one ``run_id`` (``run_id`` if given) runs
    through the file.  Never returns half a file.
    """
    import csv
    import io

    import pandas as pd

    from .readers import numbers

    path = Path(path)
    text = _records_text(path)
    rows = list(csv.reader(text.splitlines()))
    header = rows[0] if rows else []
    version = next((v for v, cols in OLDER_COLUMNS.items() if header == cols), SCHEMA_VERSION)
    columns = OLDER_COLUMNS.get(version, COLUMNS)
    if header != columns:
        _refuse_columns(path, header, rows)
    if len(rows) < 2:
        raise DamagedRecords(path, "no records (header only)")
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(columns):
            raise DamagedRecords(path, f"line {i} has {len(r)} fields, expected {len(columns)} "
                                 "(cut or edited)")
    df = pd.read_csv(io.StringIO(text),  # the bytes checked above, not the file again
                     dtype={c: str for c in columns if c not in NUMERIC_COLUMNS},
                     keep_default_na=True)
    for col in NUMERIC_COLUMNS:
        num, i = numbers(df[col])
        if i is not None:
            raise DamagedRecords(path, f"column {col}, line {i + 2}: {df[col].iloc[i]!r} is not a "
                                 "number")
        df[col] = num
    schemas = set(df.schema.dropna().astype(int))
    if schemas != {version}:
        bad = sorted(schemas - {version}) or ["(empty)"]
        status = "outdated" if schemas and schemas <= set(OLD_SCHEMAS) else "damaged"
        raise DamagedRecords(path, f"schema value {', '.join(map(str, bad))}: this rffbench reads "
                             f"schema {SCHEMA_VERSION}"
                             + (f" (and {version}, whose columns the file has)"
                                if version != SCHEMA_VERSION else "")
                             + ("; rerun the run" if status == "outdated"
                                else " (unknown value)"), status=status)
    ids = set(df.run_id.dropna())
    if len(ids) != 1 or df.run_id.isna().any():
        raise DamagedRecords(path, f"{len(ids)} run_ids in one file (expected one)")
    if run_id is not None and ids != {run_id}:
        raise DamagedRecords(path, f"holds run {ids.pop()} but lies in the directory of run "
                             f"{run_id}")
    for col in ("measurement", "metric"):
        if df[col].isna().any():
            raise DamagedRecords(path, f"empty {col} at line {int(df[col].isna().argmax()) + 2}")
    return compat.upgrade_records(df, version, COLUMNS) if version != SCHEMA_VERSION else df


def _records_text(path):
    """The text of a records file, read bounded: DamagedRecords for a file that cannot be
    read, is not a regular file, is empty, cut mid-line or not UTF-8."""
    from .readers import MAX_TABLE_BYTES, DamagedFile, read_bytes

    try:
        raw = read_bytes(path, MAX_TABLE_BYTES)
    except OSError as exc:
        raise DamagedRecords(path, f"cannot read ({exc.strerror or exc})") from None
    except DamagedFile as exc:
        raise DamagedRecords(path, exc.reason) from None
    if not raw:
        raise DamagedRecords(path, "empty file")
    if not raw.endswith(b"\n"):
        raise DamagedRecords(path, "cut mid-line (the last line has no end): the write was "
                             "interrupted")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedRecords(path, f"not UTF-8 text (byte {exc.start})") from None


def _refuse_columns(path, header, rows):
    """DamagedRecords for a header that is no schema's columns: outdated where its schema
    column names an older schema, else the columns missing and unknown."""
    old = "schema" in header and len(rows) > 1 and len(rows[1]) == len(header)
    if old:
        v = rows[1][header.index("schema")]
        try:
            v = int(float(v))
        except ValueError:
            v = None
        if v in OLD_SCHEMAS:
            raise DamagedRecords(path, f"schema {v} records (an older rffbench); this one "
                                 f"reads schema {SCHEMA_VERSION}: rerun the run",
                                 status="outdated")
    missing = [c for c in COLUMNS if c not in header]
    extra = [c for c in header if c not in COLUMNS]
    raise DamagedRecords(path, "not this schema's columns ("
                         + ", ".join(filter(None, [
                             f"missing {', '.join(missing[:5])}" if missing else "",
                             f"unknown {', '.join(extra[:5])}" if extra else ""]))
                         + ")")
