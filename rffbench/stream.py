"""Data past memory: ``.npy`` (memory-mapped) and Parquet (row groups) files, streamed.

``dataset=file`` with a ``.npy`` or ``.parquet`` path never loads the features
whole.  One pass over the file (in blocks of ``SPLIT_CHUNK`` rows) checks the
values (finite, in range), splits the rows, computes the training columns'
mean, standard deviation, minimum and maximum, and keeps the targets (8 bytes
per row: the only part that grows with n).  ``X_train`` and ``X_test`` are then
:class:`StreamedMatrix` objects: ``X[a:b]`` and ``X[index array]`` read just
those rows, standardised and cast to the run's dtype, so the ridge
accumulation, the predictions and the point samples of the measurements read
the file chunk by chunk and the peak memory does not depend on n.

The split: row i of block c goes to the test set when u < test_size, with u
uniform from a generator seeded by (seed, c): each row independently, so
n_test is test_size * n up to sampling noise (not stratified).  ``n_max``
keeps a row when u < n_max / n in the same draw.

File layouts: ``.npy`` is one 2-d numeric array, features and the target
(``dataset.target``: a column index, default the last); Parquet: numeric
columns, the target by name or index (default the last column), read with
pyarrow (``pip install 'rffbench[parquet]'``).
"""
from __future__ import annotations

import mmap

import numpy as np

from .errors import DataError, RffbenchError

#: rows per block of the split and of every read pass (fixed: the split, and so the
#: results, must not depend on how the data is read)
SPLIT_CHUNK = 65536
#: a StreamedMatrix turns into a plain array (np.asarray) only up to this many bytes;
#: beyond, code that would load it whole fails with a message instead of exhausting memory
MATERIALIZE_MAX_BYTES = 256 << 20
STREAM_FORMATS = ("npy", "parquet")


# --------------------------------------------------------------------------
# row sources: file rows -> (X block, y block)
# --------------------------------------------------------------------------
def _target_index(cfg, columns):
    """Index of the target column among ``columns`` (names or positions)."""
    n = len(columns)
    t = cfg.target
    if t is None:
        return n - 1
    if t in columns:
        return list(columns).index(t)
    if str(t).lstrip("-").isdigit() and -n <= int(t) < n:
        return int(t) % n
    shown = ", ".join(map(str, columns[:20])) + (" ..." if n > 20 else "")
    raise DataError(f"dataset.target={t!r} is not a column of {cfg.path}: columns are {shown}")


class NpySource:
    """A 2-d .npy array, memory-mapped: no row is read before it is asked for."""

    def __getstate__(self):  # to a Dask worker: the path, not the mapped data
        return dict(path=self.path, t=self.t, cols=self.cols, n=self.n)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.a = np.load(self.path, mmap_mode="r", allow_pickle=False)

    def __init__(self, cfg, path):
        self.path = path
        try:
            self.a = np.load(path, mmap_mode="r", allow_pickle=False)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise DataError(f"dataset.path={cfg.path!r}: cannot read as npy: {first}") from None
        if self.a.ndim != 2 or self.a.shape[1] < 2:
            raise DataError(f"dataset.path={cfg.path!r}: a .npy dataset is one 2-d array of "
                            f"feature columns and a target column, got shape {self.a.shape}")
        if not np.issubdtype(self.a.dtype, np.number) \
                or np.issubdtype(self.a.dtype, np.complexfloating):
            raise DataError(f"dataset.path={cfg.path!r}: the array is not real numbers "
                            f"(dtype {self.a.dtype})")
        self.n = self.a.shape[0]
        self.t = _target_index(cfg, list(range(self.a.shape[1])))
        self.cols = [j for j in range(self.a.shape[1]) if j != self.t]

    def read(self, start, stop):
        block = np.array(self.a[start:stop], dtype=np.float64)
        self._release()
        return block[:, self.cols], block[:, self.t]

    def take(self, rows):
        """Features of the given file rows (sorted): only their pages are read."""
        out = np.array(self.a[rows][:, self.cols], dtype=np.float64)
        self._release()
        return out

    def _release(self):
        """Drop the file's pages from this process's mapping once their rows are copied
        out: they stay in the page cache, but the process does not keep them resident
        (its RSS would otherwise grow with every row read, up to the file's size)."""
        mm = getattr(self.a, "_mmap", None)
        if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
            mm.madvise(mmap.MADV_DONTNEED)


class ParquetSource:
    """A Parquet file read by row groups (the last group read is kept)."""

    def __getstate__(self):  # to a Dask worker: the path, reopened there
        return dict(path=self.path, names=self.names, t=self.t, cols=self.cols, n=self.n,
                    starts=self.starts)

    def __setstate__(self, state):
        import pyarrow.parquet as pq

        self.__dict__.update(state)
        self.f = pq.ParquetFile(self.path)
        self._cache = (None, None)

    def __init__(self, cfg, path):
        self.path = path
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise RffbenchError("dataset.path=*.parquet needs pyarrow: pip install "
                                "'rffbench[parquet]'") from None
        try:
            self.f = pq.ParquetFile(path)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise DataError(f"dataset.path={cfg.path!r}: cannot read as parquet: "
                            f"{first}") from None
        schema = self.f.schema_arrow
        names = list(schema.names)
        if len(names) < 2:
            raise DataError(f"dataset.path={cfg.path!r}: a dataset needs feature columns and a "
                            f"target column, found {len(names)} column(s)")
        import pyarrow as pa

        bad = [nm for nm in names if not (pa.types.is_integer(schema.field(nm).type)
                                          or pa.types.is_floating(schema.field(nm).type)
                                          or pa.types.is_boolean(schema.field(nm).type))]
        t = _target_index(cfg, names)
        if any(nm != names[t] for nm in bad):
            raise DataError(f"dataset.path={cfg.path!r}: non-numeric feature column(s) "
                            f"{', '.join(nm for nm in bad if nm != names[t])}; encode or drop them")
        if names[t] in bad:
            raise DataError(f"dataset.path={cfg.path!r}: the target column {names[t]!r} is not "
                            "numeric; encode the classes as integers")
        self.names, self.t = names, t
        self.cols = [i for i in range(len(names)) if i != t]  # feature columns of a group
        md = self.f.metadata
        self.n = md.num_rows
        self.starts = np.cumsum([0] + [md.row_group(g).num_rows for g in range(md.num_row_groups)])
        self._cache = (None, None)

    def _group(self, g):
        if self._cache[0] != g:
            table = self.f.read_row_group(int(g), columns=self.names)
            arr = np.column_stack([table.column(nm).to_numpy(zero_copy_only=False)
                                   .astype(np.float64) for nm in self.names])
            self._cache = (g, arr)
        return self._cache[1]

    def read(self, start, stop):
        parts = []
        g = int(np.searchsorted(self.starts, start, side="right")) - 1
        while start < stop:
            arr = self._group(g)
            lo = start - self.starts[g]
            hi = min(stop, self.starts[g + 1]) - self.starts[g]
            parts.append(arr[lo:hi])
            start = self.starts[g] + hi
            g += 1
        block = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return block[:, self.cols], block[:, self.t]

    def take(self, rows):
        """Features of the given file rows (sorted), row group by row group."""
        out = []
        groups = np.searchsorted(self.starts, rows, side="right") - 1
        for g in np.unique(groups):
            r = rows[groups == g]
            out.append(self._group(g)[r - self.starts[g]])
        return np.concatenate(out)[:, self.cols]


def open_source(cfg, path, fmt):
    return NpySource(cfg, path) if fmt == "npy" else ParquetSource(cfg, path)


# --------------------------------------------------------------------------
# the split and the lazy matrices
# --------------------------------------------------------------------------
class Split:
    """Which rows of each block are train and test: one uniform per row, from a
    generator seeded by (seed, block); ``ordered``: the file's order instead (the first
    ``n_keep`` rows kept, the last round(test_size n_keep) of them test)."""

    def __init__(self, n, seed, test_size, keep=1.0, ordered=False, n_keep=None):
        self.n, self.seed, self.test_size, self.keep = n, seed, test_size, keep
        self.ordered = ordered
        self.n_keep = n if n_keep is None else min(n, n_keep)
        self.n_test = int(round(test_size * self.n_keep))
        self.blocks = [(s, min(s + SPLIT_CHUNK, n)) for s in range(0, n, SPLIT_CHUNK)]
        self._last = (None, None)
        counts = {"train": [], "test": []}
        for c in range(len(self.blocks)):
            m = self.masks(c)
            counts["train"].append(int(m["train"].sum()))
            counts["test"].append(int(m["test"].sum()))
        self.starts = {p: np.cumsum([0] + v) for p, v in counts.items()}

    def masks(self, c):
        """{'train', 'test'} boolean masks of block c (the last block's are kept: reads
        go through a block many chunks at a time)."""
        if self._last[0] != c:
            s, e = self.blocks[c]
            if self.ordered:
                idx = np.arange(s, e)
                kept = idx < self.n_keep
                test = kept & (idx >= self.n_keep - self.n_test)
                self._last = (c, {"test": test, "train": kept & ~test})
                return self._last[1]
            u = np.random.default_rng([self.seed, 0x5747EA, c]).random(e - s)
            test = u < self.keep * self.test_size
            self._last = (c, {"test": test, "train": (u < self.keep) & ~test})
        return self._last[1]

    def size(self, part):
        return int(self.starts[part][-1])


class StreamedMatrix:
    """The train or test rows of a streamed file, standardised, as a read-only 2-d
    array-like: ``shape``, ``dtype``, ``X[a:b]``, ``X[index array]`` (both read only
    those rows), ``len``; an optional ``rows`` index array makes a lazy row subset.
    ``np.asarray`` works up to MATERIALIZE_MAX_BYTES."""

    ndim = 2

    def __init__(self, source, split, part, mean, scale, dtype, where, rows=None):
        self.source, self.split, self.part = source, split, part
        self.mean, self.scale, self.dtype = mean, scale, np.dtype(dtype)
        self.where, self.rows = where, rows
        n = split.size(part) if rows is None else len(rows)
        self.shape = (n, len(mean))

    def __len__(self):
        return self.shape[0]

    def subset(self, idx):
        """A lazy view of rows ``idx`` (of this matrix), in that order."""
        idx = np.asarray(idx, dtype=np.int64)
        base = idx if self.rows is None else self.rows[idx]
        return StreamedMatrix(self.source, self.split, self.part, self.mean, self.scale,
                              self.dtype, self.where, rows=base)

    def _read_part_rows(self, idx):
        """Rows ``idx`` (sorted, of the whole part) -> standardised array."""
        out = np.empty((len(idx), self.shape[1]), dtype=self.dtype)
        starts = self.split.starts[self.part]
        blk = np.searchsorted(starts, idx, side="right") - 1
        pos = 0
        for c in np.unique(blk):
            sel = idx[blk == c]
            s, e = self.split.blocks[c]
            m = self.split.masks(c)[self.part]
            local = np.flatnonzero(m)[sel - starts[c]]
            lo, hi = int(local.min()), int(local.max()) + 1
            if 4 * len(local) >= hi - lo:  # dense: one contiguous read
                X = self.source.read(s + lo, s + hi)[0][local - lo]
            else:  # a few scattered rows (samples, shuffled sgd chunks): just those
                X = self.source.take(s + local)
            out[pos:pos + len(sel)] = (X - self.mean) / self.scale
            pos += len(sel)
        return out

    def _take(self, idx):
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            raise IndexError(f"row index out of range for {len(self)} rows")
        idx = np.where(idx < 0, idx + len(self), idx)
        part_idx = idx if self.rows is None else self.rows[idx]
        order = np.argsort(part_idx, kind="stable")
        out = np.empty((len(idx), self.shape[1]), dtype=self.dtype)
        out[order] = self._read_part_rows(part_idx[order])
        return out

    def __getitem__(self, key):
        if isinstance(key, tuple):
            rows, cols = key
            return self[rows][:, cols]
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step == 1 and self.rows is None:
                return self._read_part_rows(np.arange(start, stop, dtype=np.int64))
            return self._take(np.arange(start, stop, step))
        if np.isscalar(key):
            return self._take([int(key)])[0]
        return self._take(key)

    def __array__(self, dtype=None, copy=None):
        nbytes = self.shape[0] * self.shape[1] * self.dtype.itemsize
        if nbytes > MATERIALIZE_MAX_BYTES:
            raise RffbenchError(f"{self.where}: this step would load all {self.shape[0]} x "
                                f"{self.shape[1]} streamed values ({nbytes / 2**30:.3g} GiB) "
                                "into memory; it is not supported for data read from a "
                                ".npy/.parquet file this large (disable it, or set "
                                "dataset.n_max)")
        a = self[:]
        return a if dtype is None else a.astype(dtype, copy=False)


def is_streamed(X):
    return isinstance(X, StreamedMatrix)


def subset(X, idx):
    """Rows ``idx`` of X: a lazy view for streamed data, an array otherwise."""
    return X.subset(idx) if is_streamed(X) else X[idx]


# --------------------------------------------------------------------------
# the pass: checks, split, statistics, targets
# --------------------------------------------------------------------------
def scan(cfg, path, fmt, seed, dtype, limits):
    """One pass over the file.  Returns dict(source, split, mean, scale, col_min, col_max,
    y_train, y_test, n_file) with the statistics of the training rows (mean/scale: the
    z-scores' for dataset.scale=standardize, 0 / the largest |value| for max, 0/1 for
    none).  ``limits`` = (max |value|, max |target|)."""
    where = f"dataset=file ({cfg.path})"
    src = open_source(cfg, path, fmt)
    n = src.n
    if n < 3:
        raise DataError(f"{where}: {n} row(s); a run needs at least 3 (2 to train, 1 to test)")
    keep = 1.0 if cfg.n_max is None or n <= cfg.n_max else cfg.n_max / n
    ordered = cfg.split == "ordered"
    split = Split(n, seed, cfg.test_size, 1.0 if ordered else keep, ordered=ordered,
                  n_keep=cfg.n_max)
    if split.size("train") < 2 or split.size("test") < 1:
        raise DataError(f"{where}: {n} rows cannot be split with dataset.test_size="
                        f"{cfg.test_size} (need >= 2 train and >= 1 test rows)")
    d = len(src.cols)
    cnt, mean, m2 = 0, np.zeros(d), np.zeros(d)
    lo, hi = np.full(d, np.inf), np.full(d, -np.inf)
    ys = {"train": [], "test": []}
    for c, (s, e) in enumerate(split.blocks):
        X, y = src.read(s, e)
        bad = ~np.isfinite(X)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise DataError(f"{where}: NaN/inf value(s) in the features (first at row {s + i}, "
                            f"column {j}); clean or impute the data first")
        if not np.all(np.isfinite(y)):
            raise DataError(f"{where}: NaN/inf value(s) in the target (first at row "
                            f"{s + int(np.flatnonzero(~np.isfinite(y))[0])})")
        big = float(np.max(np.abs(X))) if X.size else 0.0
        if big > limits[0]:
            raise DataError(f"{where}: feature values up to {big:.3g}; squared distances leave "
                            f"float64's range above {limits[0]:g}: rescale the data")
        masks = split.masks(c)
        for part in ("train", "test"):
            ys[part].append(y[masks[part]])
        Xt = X[masks["train"]]
        if len(Xt):  # Chan et al.'s pairwise update of mean and sum of squares
            k = len(Xt)
            mu = Xt.mean(axis=0)
            delta = mu - mean
            tot = cnt + k
            mean = mean + delta * (k / tot)
            m2 = m2 + ((Xt - mu) ** 2).sum(axis=0) + delta**2 * (cnt * k / tot)
            cnt = tot
            lo, hi = np.minimum(lo, Xt.min(axis=0)), np.maximum(hi, Xt.max(axis=0))
    if cfg.scale == "standardize":
        scale = np.sqrt(m2 / cnt)
        scale[scale == 0] = 1.0
        center = mean
    elif cfg.scale == "max":
        peak = float(max(np.max(np.abs(lo)), np.max(np.abs(hi))))
        center, scale = np.zeros(d), np.full(d, peak if peak > 0 else 1.0)
    else:
        center, scale = np.zeros(d), np.ones(d)
    return dict(source=src, split=split, mean=center, scale=scale, n_file=n,
                col_min=(lo - center) / scale, col_max=(hi - center) / scale,
                y_train=np.concatenate(ys["train"]), y_test=np.concatenate(ys["test"]),
                where=where, keep=keep)
