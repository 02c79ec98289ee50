"""Data past memory: ``.npy`` and Parquet (row groups) files, streamed.

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

import os

import numpy as np

from .errors import DataError, RffbenchError, first_line
from .progress import Progress

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


class _FileSource:
    """What the two formats share: the file's identity (size, modification time, inode)
    taken when it is opened and compared before and after every read, so a file
    truncated, rewritten or replaced while a run streams it stops the run with one line
    naming the file and the rows being read (a mapped file would instead crash the
    process with SIGBUS when truncated, or go on reading the replaced file's old data);
    and read errors (EIO from a failing disk or network file system) as one line too."""

    def _stamp(self):
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise DataError(f"{self.where}: the file became unreadable while the run "
                            f"streamed it ({exc.strerror or exc}); nothing recorded") from None
        return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)

    def _check(self, start, stop):
        now = self._stamp()
        if now != self.stamp:
            what = (f"size {self.stamp[0]} -> {now[0]} bytes" if now[0] != self.stamp[0]
                    else "replaced by another file" if now[2:] != self.stamp[2:]
                    else "rewritten (its modification time changed)")
            raise DataError(f"{self.where}: the file changed while the run streamed it "
                            f"({what}; at rows {start}-{stop}); nothing recorded: re-run once "
                            "the file stays put")

    def _failed(self, exc, start, stop):
        first = first_line(exc, type(exc).__name__)
        return DataError(f"{self.where}: reading rows {start}-{stop} failed: {first}; "
                         "nothing recorded")

    def read(self, start, stop):
        """(features, target) of file rows start:stop, as float64."""
        self._check(start, stop)
        block = self._read(start, stop)
        self._check(start, stop)
        return block[:, self.cols], block[:, self.t]

    def take(self, rows):
        """Features of the given file rows (sorted)."""
        lo, hi = (int(rows[0]), int(rows[-1]) + 1) if len(rows) else (0, 0)
        self._check(lo, hi)
        out = self._take(rows)
        self._check(lo, hi)
        return out[:, self.cols]



def read_npy_header(path, where):
    """(shape, fortran_order, dtype, data offset) from a .npy file's header, read without
    mapping the file (numpy's memmap of an announced 10^20 bytes overflowed with warnings);
    DataError naming ``where`` for a file that is not a .npy or announces a negative
    shape."""
    fmt = np.lib.format
    try:
        with open(path, "rb") as f:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(f)
            else:
                raise ValueError(f"npy format version {version} is not supported "
                                 "(1.0 and 2.0 are)")
            offset = f.tell()
    except Exception as exc:
        first = first_line(exc, type(exc).__name__)
        raise DataError(f"{where}: cannot read as npy: {first}") from None
    if any(not isinstance(n, int) or n < 0 for n in shape):
        raise DataError(f"{where}: not a .npy array: its header announces shape {shape}")
    return tuple(shape), fortran, dtype, offset


class NpySource(_FileSource):
    """A 2-d .npy array read with positioned reads (``os.pread``): no row is read
    before it is asked for, nothing is mapped, and the header is parsed without
    unpickling anything."""

    def __getstate__(self):  # to a Dask worker: the path and what the header said
        return {k: v for k, v in self.__dict__.items() if k != "_fd"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._fd = None

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)

    def __init__(self, cfg, path):
        self.path, self.where, self._fd = path, f"dataset.path={cfg.path!r}", None
        shape, fortran, dtype, self.offset = read_npy_header(path, self.where)
        if len(shape) != 2 or shape[1] < 2:
            raise DataError(f"{self.where}: a .npy dataset is one 2-d array of feature "
                            f"columns and a target column, got shape {shape}")
        if not np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.complexfloating):
            raise DataError(f"{self.where}: the array is not real numbers (dtype {dtype})")
        self.shape, self.fortran, self.dtype = tuple(shape), bool(fortran), dtype
        self.stamp = self._stamp()
        need = self.offset + shape[0] * shape[1] * dtype.itemsize
        if self.stamp[0] < need:
            raise DataError(f"{self.where}: the file is truncated: its header announces "
                            f"{shape[0]} x {shape[1]} values ({need} bytes), it holds "
                            f"{self.stamp[0]} bytes")
        self.n = shape[0]
        self.t = _target_index(cfg, list(range(shape[1])))
        self.cols = [j for j in range(shape[1]) if j != self.t]

    def _pread(self, out, offset, start, stop):
        """Fill the array ``out`` with the bytes at ``offset`` (a short read: the file
        shrank under us)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        view, got = memoryview(out).cast("B"), 0
        try:
            while got < len(view):
                k = os.preadv(self._fd, [view[got:]], offset + got)
                if k == 0:
                    self._check(start, stop)  # names the change if there is one
                    raise DataError(f"{self.where}: the file ends before rows "
                                    f"{start}-{stop}; nothing recorded")
                got += k
        except OSError as exc:
            raise self._failed(exc, start, stop) from None

    def _read(self, start, stop):
        n, d = self.shape
        item = self.dtype.itemsize
        if not self.fortran:
            raw = np.empty((stop - start, d), dtype=self.dtype)
            self._pread(raw, self.offset + start * d * item, start, stop)
        else:  # column-major: one read per column
            raw = np.empty((d, stop - start), dtype=self.dtype)
            for j in range(d):
                self._pread(raw[j], self.offset + (j * n + start) * item, start, stop)
            raw = raw.T
        return np.asarray(raw, dtype=np.float64)

    def _take(self, rows):
        if self.fortran or len(rows) == 0:
            lo = int(rows[0]) if len(rows) else 0
            return self._read(lo, int(rows[-1]) + 1 if len(rows) else 0)[rows - lo]
        d, item = self.shape[1], self.dtype.itemsize
        raw = np.empty((len(rows), d), dtype=self.dtype)
        for i, r in enumerate(rows):  # sorted: the reads move forward through the file
            self._pread(raw[i], self.offset + int(r) * d * item, int(r), int(r) + 1)
        return np.asarray(raw, dtype=np.float64)


class ParquetSource(_FileSource):
    """A Parquet file read by row groups (the last group read is kept)."""

    def __getstate__(self):  # to a Dask worker: the path, reopened there
        return {k: v for k, v in self.__dict__.items() if k not in ("f", "_cache")}

    def __setstate__(self, state):
        import pyarrow.parquet as pq

        self.__dict__.update(state)
        self.f = pq.ParquetFile(self.path)
        self._cache = (None, None)

    def __init__(self, cfg, path):
        self.path, self.where = path, f"dataset.path={cfg.path!r}"
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise RffbenchError("dataset.path=*.parquet needs pyarrow: pip install "
                                "'rffbench[parquet]'") from None
        try:
            self.f = pq.ParquetFile(path)
        except Exception as exc:
            first = first_line(exc, type(exc).__name__)
            raise DataError(f"{self.where}: cannot read as parquet: {first}") from None
        self.stamp = self._stamp()
        schema = self.f.schema_arrow
        names = list(schema.names)
        if len(names) < 2:
            raise DataError(f"{self.where}: a dataset needs feature columns and a "
                            f"target column, found {len(names)} column(s)")
        twice = sorted({nm for nm in names if names.count(nm) > 1})
        if twice:
            raise DataError(f"{self.where}: repeated column name(s) "
                            f"{', '.join(map(repr, twice))}; give every column its own name")
        import pyarrow as pa

        bad = [nm for nm in names if not (pa.types.is_integer(schema.field(nm).type)
                                          or pa.types.is_floating(schema.field(nm).type)
                                          or pa.types.is_boolean(schema.field(nm).type))]
        t = _target_index(cfg, names)
        if any(nm != names[t] for nm in bad):
            raise DataError(f"{self.where}: non-numeric feature column(s) "
                            f"{', '.join(nm for nm in bad if nm != names[t])}; encode or drop them")
        if names[t] in bad:
            raise DataError(f"{self.where}: the target column {names[t]!r} is not "
                            "numeric; encode the classes as integers")
        self.names, self.t, self.schema = names, t, schema
        self.cols = [i for i in range(len(names)) if i != t]  # feature columns of a group
        md = self.f.metadata
        self.n = md.num_rows
        self.starts = np.cumsum([0] + [md.row_group(g).num_rows for g in range(md.num_row_groups)])
        self._cache = (None, None)

    def _group(self, g):
        if self._cache[0] != g:
            a, b = int(self.starts[g]), int(self.starts[g + 1])
            try:
                table = self.f.read_row_group(int(g), columns=self.names)
            except Exception as exc:  # EIO, a damaged page, a file cut short
                self._check(a, b)
                raise self._failed(exc, a, b) from None
            if not table.schema.equals(self.schema):
                raise DataError(f"{self.where}: row group {g} (rows {a}-{b}) has the schema "
                                f"{_schema_line(table.schema)}, the file "
                                f"{_schema_line(self.schema)}")
            nulls = [nm for nm in self.names if table.column(nm).null_count]
            if nulls:
                raise DataError(f"{self.where}: missing (null) values in column(s) "
                                f"{', '.join(nulls)} of row group {g} (rows {a}-{b}); "
                                "clean or impute the data first")
            arr = np.column_stack([table.column(nm).to_numpy(zero_copy_only=False)
                                   .astype(np.float64) for nm in self.names])
            self._cache = (g, arr)
        return self._cache[1]

    def _read(self, start, stop):
        parts = []
        g = int(np.searchsorted(self.starts, start, side="right")) - 1
        while start < stop:
            arr = self._group(g)
            lo = start - self.starts[g]
            hi = min(stop, self.starts[g + 1]) - self.starts[g]
            parts.append(arr[lo:hi])
            start = self.starts[g] + hi
            g += 1
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _take(self, rows):
        out = []
        groups = np.searchsorted(self.starts, rows, side="right") - 1
        for g in np.unique(groups):
            r = rows[groups == g]
            out.append(self._group(g)[r - self.starts[g]])
        return np.concatenate(out)


def _schema_line(schema):
    return ", ".join(f"{f.name}: {f.type}" for f in schema)


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


#: the dataset.scale values that divide every value by one number of the training rows
MAX_SCALES = ("max", "xmax")


def max_peak(scale, col_min, col_max, where="dataset"):
    """The one number ``dataset.scale=max`` or ``xmax`` divides every value by, from the
    training rows' column minima and maxima: max the largest |value|, xmax the largest
    value (quffka's ``x / x.max()``; they differ where the most negative value is the
    larger in size).  xmax with no positive value is refused (the division would flip or
    blow up the data); an all-zero block divides by 1."""
    if scale == "xmax":
        peak = float(np.max(col_max))
        if not peak > 0:
            raise DataError(f"{where}: dataset.scale=xmax divides by the training rows' largest "
                            f"value, {peak:.6g} here; it needs a positive one: use "
                            "dataset.scale=max (largest |value|) or standardize")
        return peak
    peak = float(max(np.max(np.abs(col_min)), np.max(np.abs(col_max))))
    return peak if peak > 0 else 1.0


# --------------------------------------------------------------------------
# the pass: checks, split, statistics, targets
# --------------------------------------------------------------------------
def scan(cfg, path, fmt, seed, dtype, limits):
    """One pass over the file.  Returns dict(source, split, mean, scale, col_min, col_max,
    y_train, y_test, n_file) with the statistics of the training rows (mean/scale: the
    z-scores' for dataset.scale=standardize, 0 / the largest |value| for max (value for
    xmax), 0/1 for none).  ``limits`` = (max |value|, max |target|)."""
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
    progress = Progress(f"{where}: loading pass", len(split.blocks), "blocks")
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
        progress.step()
    if cfg.scale == "standardize":
        scale = np.sqrt(m2 / cnt)
        scale[scale == 0] = 1.0
        center = mean
    elif cfg.scale in MAX_SCALES:
        center, scale = np.zeros(d), np.full(d, max_peak(cfg.scale, lo, hi, where))
    else:
        center, scale = np.zeros(d), np.ones(d)
    return dict(source=src, split=split, mean=center, scale=scale, n_file=n,
                col_min=(lo - center) / scale, col_max=(hi - center) / scale,
                y_train=np.concatenate(ys["train"]), y_test=np.concatenate(ys["test"]),
                where=where, keep=keep)
