"""From a loader's raw (X, y, info) to a run's :class:`Dataset`: the memory of loading
known before loading, checks, subsampling, the split, scaling and the dtype
(:func:`load_dataset`).
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError, first_line
from ..stream import MAX_SCALES, SPLIT_CHUNK, max_peak
from .base import Dataset, as_loader
from .builtin import DATASETS
from .files import data_file, guess_task, streamed_format


def data_plan(cfg, dtype="float64"):
    """The memory plan of loading ``dataset`` before it is loaded (the dataset's
    :meth:`DatasetLoader.plan`)."""
    return as_loader(DATASETS[cfg.name]).plan(cfg)


# --------------------------------------------------------------------------
# the common part
# --------------------------------------------------------------------------
#: largest |value| of a feature or regression target: squares of distances
#: (times d) and of errors stay far inside float64's range
MAX_ABS_VALUE = 1e100
#: the same for float32 features (float32 overflows above 3.4e38)
MAX_ABS_VALUE_F32 = 1e15
#: the largest |feature value| must reach this: smaller data has squared distances that
#: underflow (use dataset.scale=standardize or max)
MIN_ABS_VALUE = 1e-100


def scale_by_max(X_train, X_test, scale="max", where="dataset"):
    """Both parts divided by one number of the training rows (:func:`max_peak`; one number
    for every column: the quadrature papers' x / x.max(), which keeps the kernel's
    geometry).  Returns the two parts and that number."""
    peak = max_peak(scale, X_train.min(axis=0), X_train.max(axis=0), where)
    return X_train / peak, X_test / peak, peak


def standardize(X_train, X_test):
    """z-scores with the training statistics, overflow-safe: each column is first
    divided by its largest |value| (the result is the same z-score)."""
    peak = np.max(np.abs(X_train), axis=0)
    peak[peak == 0] = 1.0
    A, B = X_train / peak, X_test / peak
    mu = A.mean(axis=0)
    sd = A.std(axis=0)
    sd[sd == 0] = 1.0
    return (A - mu) / sd, (B - mu) / sd


def _as_array(a, where, name):
    """A loader's X or y as a numpy array (one line if it cannot be one)."""
    try:
        return np.asarray(a)
    except Exception as exc:  # ragged lists
        raise DataError(f"{where}: the loader's {name} is not an array: "
                        f"{first_line(exc)}") from None


def _checked_targets(y, task, where):
    """Class codes 0..k-1 (at least 2 classes) or float64 regression targets in range."""
    if task == "classification":
        classes, y = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise DataError(f"{where}: classification needs at least 2 classes, found "
                            f"{classes.size}")
        return y
    y = np.asarray(y, dtype=np.float64)
    big = float(np.max(np.abs(y))) if y.size else 0.0
    if big > MAX_ABS_VALUE:
        raise DataError(f"{where}: targets up to {big:.3g} in absolute value; squared errors "
                        f"leave float64's range above {MAX_ABS_VALUE:g}: rescale the target")
    return y


def _check_not_tiny(peak, where, cfg):
    """DataError when the largest |feature value| ``peak`` makes squared distances
    underflow."""
    if 0 < peak < MIN_ABS_VALUE:
        raise DataError(f"{where}: every feature value is at most {peak:.3g} in absolute value; "
                        f"squared distances underflow below {MIN_ABS_VALUE:g}: rescale the data"
                        + ("" if cfg.scale != "none" else " or set dataset.scale=standardize"))


def load_dataset(cfg, seed=0, dtype="float64") -> Dataset:
    """Load, check, subsample, split, standardise and cast one dataset (a .npy or
    .parquet file: streamed, see rffbench.stream)."""
    if streamed_format(cfg):
        return _load_streamed(cfg, seed, dtype)
    from ..plugins import load_with

    where = f"dataset={cfg.name}" + (f" ({cfg.path})" if cfg.name == "file" else "")
    if cfg.name not in DATASETS.builtins():
        where += f" ({DATASETS.describe(cfg.name)})"
    X, y, info = load_with(as_loader(DATASETS[cfg.name]), cfg, seed, where)
    X, y, task = _checked_loaded(X, y, info, where)
    notes = []
    rng = np.random.default_rng([seed, 0xDA7A])
    ordered = cfg.split == "ordered"
    if cfg.n_max is not None and X.shape[0] > cfg.n_max:
        keep = np.arange(cfg.n_max) if ordered else \
            np.sort(rng.choice(X.shape[0], cfg.n_max, replace=False))
        X, y = X[keep], y[keep]
        notes.append(f"{'the first' if ordered else 'subsampled to'} n_max={cfg.n_max} rows")
    n_test = int(round(cfg.test_size * X.shape[0]))
    if n_test < 1 or X.shape[0] - n_test < 2:
        raise DataError(f"{where}: {X.shape[0]} rows cannot be split with "
                        f"dataset.test_size={cfg.test_size} (need >= 2 train and >= 1 test rows)")
    if ordered:
        n_tr = X.shape[0] - n_test
        Xtr, Xte, ytr, yte = X[:n_tr], X[n_tr:], y[:n_tr], y[n_tr:]
        notes.append(f"split in the file's order: rows 1..{n_tr} train, {n_tr + 1}.."
                     f"{X.shape[0]} test")
    else:
        from sklearn.model_selection import train_test_split

        stratify = None
        k = np.unique(y).size
        if task == "classification" and np.bincount(y).min() >= 2 and n_test >= k \
                and X.shape[0] - n_test >= k:  # each side can hold every class
            stratify = y
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=n_test, random_state=seed,
                                              stratify=stratify)
    if cfg.scale == "standardize":
        Xtr, Xte = standardize(Xtr, Xte)
    elif cfg.scale in MAX_SCALES:
        Xtr, Xte, peak = scale_by_max(Xtr, Xte, cfg.scale, where)
        what = "largest |value|" if cfg.scale == "max" else "largest value"
        notes.append(f"every value divided by the training rows' {what} {peak:.6g}")
    limit = MAX_ABS_VALUE if np.dtype(dtype) == np.float64 else MAX_ABS_VALUE_F32
    _check_not_tiny(float(np.max(np.abs(Xtr))), where, cfg)
    for part in (Xtr, Xte):
        big = float(np.max(np.abs(part)))
        if big > limit:
            j = int(np.argmax(np.max(np.abs(part), axis=0)))
            after = f" after dataset.scale={cfg.scale}" if cfg.scale != "none" else ""
            raise DataError(f"{where}: feature values up to {big:.3g} (column {j}){after}; "
                            f"squared distances leave {dtype}'s range above {limit:g}: rescale "
                            "the data" + ("" if cfg.scale != "none" else
                                          " or set dataset.scale=standardize"))
    dt = np.dtype(dtype)
    diameter = info.get("diameter") if cfg.scale != "standardize" else None
    if diameter is not None and cfg.scale in MAX_SCALES:
        diameter /= peak
    return Dataset(name=cfg.name, task=task, X_train=np.ascontiguousarray(Xtr, dtype=dt),
                   y_train=ytr, X_test=np.ascontiguousarray(Xte, dtype=dt), y_test=yte,
                   source=info["source"], licence=info["licence"], diameter=diameter,
                   notes=notes)


def _checked_loaded(X, y, info, where):
    """(X as float, y, task) of what a loader returned, or a DataError naming ``where`` and
    what is wrong: shapes, info's task, source and licence, non-numeric values, too few rows
    or columns, NaN/inf in the features or the target, targets unfit for the task."""
    X, y = _as_array(X, where, "X"), _as_array(y, where, "y")
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise DataError(f"{where}: the loader returned X of shape {X.shape} and y of shape "
                        f"{y.shape}; a loader returns X (n, d) and y (n,), one label per row")
    missing = [k for k in ("task", "source", "licence") if k not in info]
    if missing or info["task"] not in ("regression", "classification"):
        raise DataError(f"{where}: the loader's info must name task (regression | "
                        f"classification), source and licence; got {sorted(info)}")
    if X.dtype.kind not in "iubf":
        raise DataError(f"{where}: X is not real numbers (dtype {X.dtype}); encode or drop "
                        "the non-numeric columns")
    if y.dtype.kind not in "iubf" and info["task"] == "regression":
        raise DataError(f"{where}: the regression target is not numbers (dtype {y.dtype}, "
                        f"e.g. {y[0]!r}); class labels need info task=classification")
    X = X.astype(np.float64, copy=False) if X.dtype.kind in "iub" else X
    if X.shape[0] == 0:
        raise DataError(f"{where}: no rows")
    if X.shape[1] == 0:
        raise DataError(f"{where}: no feature columns")
    if X.shape[0] < 3:
        raise DataError(f"{where}: {X.shape[0]} row(s); a run needs at least 3 (2 to train, 1 "
                        "to test)")
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(f"{where}: {int(bad.sum())} NaN/inf value(s) in the features "
                        f"(first at row {i}, column {j}); clean or impute the data first")
    if y.dtype.kind in "iubf" and not np.all(np.isfinite(y.astype(np.float64))):
        raise DataError(f"{where}: NaN/inf value(s) in the target")
    task = info["task"]
    y = _checked_targets(y, task, where)
    return X, y, task


def _load_streamed(cfg, seed, dtype):
    """A .npy/.parquet file: one checking pass (rffbench.stream.scan), then lazy train
    and test matrices over the file."""
    from ..stream import StreamedMatrix, scan

    path = data_file(cfg)
    fmt = streamed_format(cfg)
    limit = MAX_ABS_VALUE if np.dtype(dtype) == np.float64 else MAX_ABS_VALUE_F32
    sc = scan(cfg, path, fmt, seed, dtype, (limit, MAX_ABS_VALUE))
    where = sc["where"]
    ytr, yte = sc["y_train"], sc["y_test"]
    task = cfg.file_task or guess_task(ytr)
    y = _checked_targets(np.concatenate([ytr, yte]), task, where)
    ytr, yte = y[:ytr.size], y[ytr.size:]
    lo, hi = sc["col_min"], sc["col_max"]
    peak = float(max(np.max(np.abs(lo)), np.max(np.abs(hi))))
    _check_not_tiny(peak, where, cfg)
    if peak > limit:
        raise DataError(f"{where}: feature values up to {peak:.3g}; squared distances leave "
                        f"{dtype}'s range above {limit:g}: rescale the data")
    args = (sc["source"], sc["split"])
    mats = [StreamedMatrix(*args, part, sc["mean"], sc["scale"], dtype,
                           f"{where}, {part} rows") for part in ("train", "test")]
    split = sc["split"]
    how = (f"rows 1..{split.n_keep - split.n_test} train, the next {split.n_test} test (the "
           "file's order)" if split.ordered else
           f"each row is a test row with probability {cfg.test_size} (seeded, not stratified)")
    notes = [f"streamed from {fmt}: {sc['n_file']} rows read in blocks of {SPLIT_CHUNK}, "
             f"never loaded whole; {how}"]
    if sc["keep"] < 1 and not split.ordered:
        notes.append(f"n_max={cfg.n_max}: each row kept with probability {sc['keep']:.4g} "
                     f"({mats[0].shape[0] + mats[1].shape[0]} rows)")
    return Dataset(name=cfg.name, task=task, X_train=mats[0], y_train=ytr, X_test=mats[1],
                   y_test=yte, source=f"file: {path} ({fmt}, streamed)",
                   licence="user-provided", notes=notes, col_range=(lo, hi))
