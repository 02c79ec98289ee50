"""A user's file: svmlight, CSV, .npz, .npy or Parquet (the last two streamed when large).
"""
from __future__ import annotations

import os

import numpy as np

from ..checks import Key, OneOf, require
from ..errors import DataError, first_line
from ..memory import Need, Plan, available_bytes, human
from ..stream import SPLIT_CHUNK, STREAM_FORMATS, read_npy_header
from .base import LOAD_COPIES, MAX_GUESSED_CLASSES, TASKS, DatasetLoader


def data_file(cfg):
    """``dataset.path`` expanded; DataError when it is not a regular file (missing, or a
    directory, a device or a pipe, which a reader would wait on or read forever)."""
    path = os.path.expanduser(cfg.path)
    if not os.path.isfile(path):
        raise DataError(f"dataset.path={cfg.path!r}: " + (
            "not a regular file (a directory, a device or a pipe): give a data file"
            if os.path.exists(path) else "no such file"))
    return path


#: dataset.format: the formats of a user's file (dataset=file)
FILE_FORMATS = ("svmlight", "csv", "npz", "npy", "parquet")


def _infer_format(path):
    ext = os.path.splitext(path)[1].lower()
    return {".csv": "csv", ".npz": "npz", ".npy": "npy", ".parquet": "parquet",
            ".pq": "parquet"}.get(ext, "svmlight")


class UserFile(DatasetLoader):
    """A user file: LIBSVM/svmlight, CSV with a target column, or .npz with X, y (.npy
    and .parquet are streamed: rffbench.stream)."""

    KEYS = {"path": Key(None, None, "the file (.svm/.libsvm/.txt, .csv, .npz, or "
                                     ".npy/.parquet, streamed)"),
            "format": Key(None, OneOf(FILE_FORMATS, none=True, text="use one of "
                                      + ", ".join(FILE_FORMATS) + " or null (from the "
                                      "extension)"),
                          "svmlight | csv | npz | npy | parquet; null = from the extension"),
            "target": Key(None, None, "the target column (CSV: name or 0-based index; null = "
                                       "the last)"),
            "file_task": Key(None, OneOf(TASKS, none=True), "classification or regression; "
                             "null = guess (integer targets with few distinct values are "
                             "classification)")}

    def check_config(self, cfg):
        require(bool(cfg.path), "dataset.path", cfg.path,
                "dataset=file needs dataset.path=<file> (.svm/.libsvm/.txt, .csv, .npz, or "
                ".npy/.parquet, streamed)")

    def load(self, cfg, seed):
        path = data_file(cfg)
        fmt = cfg.format or _infer_format(path)
        try:
            if fmt == "npz":
                with np.load(path, allow_pickle=False) as z:
                    missing = [k for k in ("X", "y") if k not in z.files]
                    if missing:
                        raise DataError(f"dataset.path={cfg.path!r}: .npz needs arrays 'X' "
                                        "and 'y', "
                                        f"found {', '.join(z.files) or 'none'}")
                    X, y = np.asarray(z["X"]), np.asarray(z["y"])
            elif fmt == "csv":
                X, y = _read_csv(path, cfg)
            else:
                from sklearn.datasets import load_svmlight_file

                Xs, y = load_svmlight_file(path)
                avail = available_bytes()
                if avail is not None and Xs.shape[0] * Xs.shape[1] * 8 > avail // 2:
                    raise DataError(f"dataset.path={cfg.path!r}: {Xs.shape[0]} x "
                                    f"{Xs.shape[1]} dense "
                                    "would not fit in half the free memory; set dataset.n_max")
                X = Xs.toarray()
        except DataError:
            raise
        except Exception as exc:  # unreadable, ragged, wrong format
            first = first_line(exc, type(exc).__name__)
            guessed = "" if cfg.format else (
                f" (the format {fmt} was guessed from the name; set dataset.format to one of "
                f"{', '.join(FILE_FORMATS)})")
            raise DataError(f"dataset.path={cfg.path!r}: cannot read as {fmt}: {first}"
                            f"{guessed}") from None
        if X.ndim != 2:
            raise DataError(f"dataset.path={cfg.path!r}: X must be 2-d, got shape {X.shape}")
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise DataError(f"dataset.path={cfg.path!r}: y must be 1-d with {X.shape[0]} entries "
                            f"(one per row of X), got shape {y.shape}")
        for name, a in (("X", X), ("y", y)):
            if np.issubdtype(a.dtype, np.complexfloating):
                raise DataError(f"dataset.path={cfg.path!r}: {name} is complex (dtype {a.dtype}); "
                                "rffbench takes real data: store the real and imaginary parts as "
                                "separate columns")
            if not np.issubdtype(a.dtype, np.number):
                raise DataError(f"dataset.path={cfg.path!r}: {name} is not numeric "
                                f"(dtype {a.dtype})")
        task = cfg.file_task or guess_task(y)
        info = dict(task=task, source=f"file: {path} ({fmt})", licence="user-provided")
        return X.astype(np.float64), y, info

    def plan(self, cfg):
        """Streamed: the targets and the blocks in flight; else the shape from the header
        (CSV rows x columns, .npz array headers), or the file's size."""
        plan = Plan()
        if streamed_format(cfg):
            rows = _stream_rows(cfg)
            plan.add("load", [Need(f"dataset.path={cfg.path!r}: streaming its {rows} rows (the "
                                   "targets, 8 bytes a row, and the blocks being read)",
                                   lambda v: 24.0 * rows + 4 * 8.0 * SPLIT_CHUNK * 1024)])
            return plan
        if not cfg.path:
            return plan
        shape = _file_shape(cfg)
        if shape is not None:
            n, d = shape
            plan.add("load", [Need(f"dataset.path={cfg.path!r}: loading its {n} x {d} values",
                                   lambda v: LOAD_COPIES * 8.0 * n * d)])
            return plan
        path = os.path.expanduser(cfg.path)
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        fmt = cfg.format or _infer_format(path)
        per_byte = 3.0 if fmt == "svmlight" else LOAD_COPIES * 8.0 / 2
        plan.add("load", [Need(f"dataset.path={cfg.path!r}: loading a {human(size)} "
                               f"{fmt} file", lambda v: per_byte * size)])
        return plan


def _read_csv(path, cfg):
    import pandas as pd

    df = pd.read_csv(path)
    if df.shape[0] == 0:
        raise DataError(f"dataset.path={cfg.path!r}: no rows")
    if df.shape[1] < 2:
        raise DataError(f"dataset.path={cfg.path!r}: a CSV needs feature columns and a target "
                        f"column, found {df.shape[1]} column(s)")
    target = cfg.target
    if target is None:
        col = df.columns[-1]
    elif target in df.columns:
        col = target
    elif str(target).lstrip("-").isdigit() and -df.shape[1] <= int(target) < df.shape[1]:
        col = df.columns[int(target)]
    else:
        raise DataError(f"dataset.target={target!r} is not a column of {cfg.path}: columns are "
                        f"{', '.join(map(str, df.columns[:20]))}"
                        f"{' ...' if df.shape[1] > 20 else ''}")
    feats = df.drop(columns=[col])
    bad = [str(c) for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    if bad:
        raise DataError(f"dataset.path={cfg.path!r}: non-numeric feature column(s) "
                        f"{', '.join(bad[:5])}; encode them or drop them")
    y = df[col].to_numpy()
    if not pd.api.types.is_numeric_dtype(df[col]):
        y = np.unique(y.astype(str), return_inverse=True)[1]
    return feats.to_numpy(dtype=np.float64), y


def guess_task(y):
    yv = np.asarray(y, dtype=np.float64)
    finite = yv[np.isfinite(yv)]
    if finite.size and np.all(finite == np.round(finite)) \
            and np.unique(finite).size <= MAX_GUESSED_CLASSES:
        return "classification"
    return "regression"


# --------------------------------------------------------------------------
# memory of loading, known before loading
# --------------------------------------------------------------------------
def _file_shape(cfg):
    """(rows, columns) a user file will load into, estimated without parsing it, or
    None (then the size of the file bounds it)."""
    import zipfile

    path = os.path.expanduser(cfg.path)
    fmt = cfg.format or _infer_format(path)
    try:
        size = os.path.getsize(path)
    except OSError:
        return None  # the loader says why
    budget = available_bytes()
    if fmt == "npz":
        try:
            shapes = {}
            with zipfile.ZipFile(path) as z:
                for name in ("X.npy", "y.npy"):
                    with z.open(name) as fh:
                        version = np.lib.format.read_magic(fh)
                        shape, _, _ = np.lib.format._read_array_header(fh, version)
                        shapes[name] = shape
            X = shapes["X.npy"]
            return (X[0], int(np.prod(X[1:]))) if len(X) >= 1 else None
        except Exception:
            return None
    # a value takes >= 2 characters ("1,"): at most size / 2 values
    if budget is None or LOAD_COPIES * 8.0 * size / 2 < budget / 4:
        return None
    if fmt == "csv":
        with open(path, "rb") as fh:
            header = fh.readline()
            rows = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))
        return rows, max(1, header.count(b","))
    return None


def _stream_rows(cfg):
    """Rows of a .npy/.parquet file from its header (0 if it cannot be read: the loader
    says why)."""
    path = os.path.expanduser(cfg.path)
    try:
        if streamed_format(cfg) == "npy":
            return int(read_npy_header(path, "dataset.path")[0][0])
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception:
        return 0


def streamed_format(cfg):
    """'npy' | 'parquet' when ``dataset`` is a file read by rffbench.stream, else None."""
    if cfg.name != "file" or not cfg.path:
        return None
    fmt = cfg.format or _infer_format(cfg.path)
    return fmt if fmt in STREAM_FORMATS else None


#: the sources this module registers (rffbench.datasets.builtin collects them)
SOURCES = {"file": UserFile()}
