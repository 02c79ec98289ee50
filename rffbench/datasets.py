"""``DATASETS``: synthetic ball data, scikit-learn's bundled real data, user files.

Every loader returns raw ``(X, y, info)``; :func:`load_dataset` then checks the
values (finite, non-empty, consistent shapes), subsamples to ``n_max`` rows,
splits train/test (``dataset.split``: with the seed, stratified for
classification, or in the file's order), scales (``dataset.scale``: z-scores
with training statistics, division by the training rows' largest |value|, or
none) and casts to the run's dtype.  Nothing here touches the network.

``DATASETS`` is a :class:`~rffbench.registry.Registry` of :class:`DatasetLoader`
objects: each loads ``(cfg, seed) -> (X, y, info)`` (``info`` holds ``task``,
regression | classification, ``source`` and ``licence``) and says, before it
loads, how much memory loading takes (:meth:`DatasetLoader.plan`, from the
shape it declares).  Plug-ins add datasets through the entry-point group
``rffbench.datasets`` or an import path: a DatasetLoader (class or instance) or
a plain function ``(cfg, seed) -> (X, y, info)``, whose memory is then not
planned.
"""
from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .errors import DataError, first_line
from .stream import SPLIT_CHUNK, STREAM_FORMATS, read_npy_header
from .memory import Need, Plan, available_bytes, human
from .registry import Registry

log = logging.getLogger(__name__)

#: rows generated per chunk by the synthetic loader (fixed: results must not
#: depend on it, since each chunk has its own seeded stream)
SYNTHETIC_CHUNK = 65536
#: a file target with at most this many distinct integer values is a class label
MAX_GUESSED_CLASSES = 50


@dataclass
class Dataset:
    name: str
    task: str  # "regression" | "classification"
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    source: str
    licence: str
    #: true diameter of the support when known (synthetic ball: 2 r)
    diameter: Optional[float] = None
    notes: list = field(default_factory=list)
    #: streamed data (rffbench.stream): per-column (min, max) of the training rows as
    #: the run sees them (standardised), so that checks need not read the file again
    col_range: Optional[tuple] = None

    @property
    def streamed(self):
        return self.col_range is not None

    @property
    def d(self):
        return self.X_train.shape[1]

    @property
    def n_classes(self):
        return int(self.y_train.max()) + 1 if self.task == "classification" else 0


# --------------------------------------------------------------------------
# loaders: cfg -> (X, y, info)
# --------------------------------------------------------------------------
#: peak bytes of loading per float64 value: the array, the split copies, the
#: standardised copies (and a cast)
LOAD_COPIES = 3.5


class DatasetLoader:
    """A dataset of the registry (module docs).  The docstring's first sentence is its
    line in ``--help``; subclasses implement :meth:`load` and declare :meth:`shape`."""

    #: the keys of the dataset block it reads beyond those every dataset has (name, n_max,
    #: test_size, split, scale), among rffbench.config.LOADER_KEYS (n, d, radius, noise,
    #: task, path, format, target, file_task); the others are refused when set, as having
    #: no effect.  None: not declared (a plug-in function): none is refused
    KEYS = None

    def load(self, cfg, seed):
        """Raw ``(X, y, info)`` (checked, split and scaled by :func:`load_dataset`)."""
        raise NotImplementedError

    def shape(self, cfg):
        """(rows, columns) it loads, known before loading, or None."""
        return None

    def plan(self, cfg):
        """The memory plan of loading (:class:`rffbench.memory.Plan`): from :meth:`shape`
        (the array, its split and scaled copies); empty when the shape is unknown."""
        plan = Plan()
        shape = self.shape(cfg)
        if shape is not None:
            n, d = shape
            plan.add("load", [Need(f"loading dataset={cfg.name} ({n} x {d})",
                                   lambda v: LOAD_COPIES * 8.0 * n * d)])
        return plan

    def __call__(self, cfg, seed):
        return self.load(cfg, seed)


class FunctionLoader(DatasetLoader):
    """A plug-in's function ``(cfg, seed) -> (X, y, info)`` as a loader (shape unknown)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def load(self, cfg, seed):
        return self.fn(cfg, seed)


def as_loader(obj):
    """A registry entry as a :class:`DatasetLoader` instance (a class is instantiated, a
    function wrapped)."""
    if isinstance(obj, type) and issubclass(obj, DatasetLoader):
        return obj()
    return obj if isinstance(obj, DatasetLoader) else FunctionLoader(obj)


def loader_check(name, obj):
    """The registry's check of a plug-in dataset: a DatasetLoader or a function."""
    from .errors import ConfigError

    from .registry import unimplemented

    cls = obj if isinstance(obj, type) else type(obj)
    if isinstance(obj, type) and not issubclass(obj, DatasetLoader) or not callable(obj):
        raise ConfigError(f"{name!r} is not a dataset: it must be a "
                          "rffbench.datasets.DatasetLoader (class or instance) or a function "
                          f"(cfg, seed) -> (X, y, info) (got {obj!r})")
    if issubclass(cls, DatasetLoader) and unimplemented(cls, DatasetLoader, [("load",)]) \
            and not isinstance(obj, FunctionLoader):
        raise ConfigError(f"{name!r} is not a usable dataset: {cls.__qualname__} does not "
                          "implement load (it leaves it to DatasetLoader)")


def synthetic_blocks(cfg, seed):
    """The synthetic data, block by block: (start, stop, X block, y block) for blocks of
    SYNTHETIC_CHUNK rows, each from its own seeded stream (see :func:`_synthetic`)."""
    d = cfg.d if cfg.d is not None else 8
    n, r = cfg.n, cfg.radius
    root = np.random.SeedSequence([seed, 0x5E7])
    waves_seq, *chunk_seqs = root.spawn(1 + -(-n // SYNTHETIC_CHUNK))
    wr = np.random.default_rng(waves_seq)
    J = 8
    V = wr.standard_normal((d, J)) * (3.0 / (r * np.sqrt(d)))
    phase = wr.uniform(0, 2 * np.pi, J)
    amp = np.full(J, 1.0 / np.sqrt(J))
    for c, seq in enumerate(chunk_seqs):
        s, e = c * SYNTHETIC_CHUNK, min(n, (c + 1) * SYNTHETIC_CHUNK)
        rng = np.random.default_rng(seq)
        g = rng.standard_normal((e - s, d))
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        g *= r * rng.random((e - s, 1)) ** (1.0 / d)
        y = np.cos(g @ V + phase) @ amp + cfg.noise * rng.standard_normal(e - s)
        yield s, e, g, (y > 0).astype(np.int64) if cfg.task == "classification" else y


def write_synthetic_npy(path, cfg, seed=0):
    """The synthetic data as a (n, d + 1) .npy file (target last), written block by
    block through a memory map: a dataset=file input of any size in bounded memory."""
    d = cfg.d if cfg.d is not None else 8
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(cfg.n, d + 1))
    for s, e, X, y in synthetic_blocks(cfg, seed):
        out[s:e, :d] = X
        out[s:e, d] = y
    out.flush()
    del out
    return path


class Synthetic(DatasetLoader):
    """Points uniform in the d-ball of radius r; smooth random target.

    f(x) = sum_j a_j cos(v_j . x + phi_j), J = 8 fixed random waves with
    |v_j| ~ 3/r (a few oscillations across the ball); regression target
    f(x) + noise N(0, noise^2); classification target 1[f(x) + noise e > 0].
    """

    KEYS = ("n", "d", "radius", "noise", "task")

    def load(self, cfg, seed):
        d = cfg.d if cfg.d is not None else 8
        n, r = cfg.n, cfg.radius
        X = np.empty((n, d))
        y = np.empty(n, dtype=np.int64 if cfg.task == "classification" else np.float64)
        for s, e, Xb, yb in synthetic_blocks(cfg, seed):
            X[s:e], y[s:e] = Xb, yb
        info = dict(task=cfg.task, source=f"synthetic: uniform in the {d}-ball of radius {r}",
                    licence="generated", diameter=2.0 * r)
        return X, y, info

    def plan(self, cfg):
        """dataset.n x dataset.d (and the targets), scalable: the plan can say which
        dataset.n or dataset.d would fit."""
        plan = Plan()
        plan.add("load", [Need("generating the synthetic data (dataset.n x dataset.d, with "
                               "the split and standardised copies)",
                               lambda v: LOAD_COPIES * 8.0 * v["dataset.n"] * v["dataset.d"]
                               + 24.0 * v["dataset.n"],
                               {"dataset.n": (cfg.n, 2), "dataset.d": (cfg.d or 8, 1)})])
        return plan


class SklearnDataset(DatasetLoader):
    """A dataset bundled with scikit-learn (``sklearn.datasets.<fn_name>``)."""

    KEYS = ()

    def __init__(self, fn_name, task, source, licence, shape):
        self.fn_name, self.task, self.source, self.licence = fn_name, task, source, licence
        self._shape = shape
        self.__doc__ = f"{source} ({task})"

    def load(self, cfg, seed):
        import sklearn.datasets as skd

        X, y = getattr(skd, self.fn_name)(return_X_y=True)
        return X.astype(np.float64), y, dict(task=self.task, source=self.source,
                                             licence=self.licence)

    def shape(self, cfg):
        return self._shape


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

    KEYS = ("path", "format", "target", "file_task")

    def load(self, cfg, seed):
        path = data_file(cfg)
        fmt = cfg.format or _infer_format(path)
        try:
            if fmt == "npz":
                with np.load(path, allow_pickle=False) as z:
                    missing = [k for k in ("X", "y") if k not in z.files]
                    if missing:
                        raise DataError(f"dataset.path={cfg.path!r}: .npz needs arrays 'X' and 'y', "
                                        f"found {', '.join(z.files) or 'none'}")
                    X, y = np.asarray(z["X"]), np.asarray(z["y"])
            elif fmt == "csv":
                X, y = _read_csv(path, cfg)
            else:
                from sklearn.datasets import load_svmlight_file

                Xs, y = load_svmlight_file(path)
                avail = available_bytes()
                if avail is not None and Xs.shape[0] * Xs.shape[1] * 8 > avail // 2:
                    raise DataError(f"dataset.path={cfg.path!r}: {Xs.shape[0]} x {Xs.shape[1]} dense "
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
                raise DataError(f"dataset.path={cfg.path!r}: {name} is not numeric (dtype {a.dtype})")
        task = cfg.file_task or _guess_task(y)
        info = dict(task=task, source=f"file: {path} ({fmt})", licence="user-provided")
        return X.astype(np.float64), y, info

    def plan(self, cfg):
        """Streamed: the targets and the blocks in flight; else the shape from the header
        (CSV rows x columns, .npz array headers), or the file's size."""
        plan = Plan()
        if _streamed_format(cfg):
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
                        f"{', '.join(map(str, df.columns[:20]))}{' ...' if df.shape[1] > 20 else ''}")
    feats = df.drop(columns=[col])
    bad = [str(c) for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    if bad:
        raise DataError(f"dataset.path={cfg.path!r}: non-numeric feature column(s) "
                        f"{', '.join(bad[:5])}; encode them or drop them")
    y = df[col].to_numpy()
    if not pd.api.types.is_numeric_dtype(df[col]):
        y = np.unique(y.astype(str), return_inverse=True)[1]
    return feats.to_numpy(dtype=np.float64), y


def _guess_task(y):
    yv = np.asarray(y, dtype=np.float64)
    finite = yv[np.isfinite(yv)]
    if finite.size and np.all(finite == np.round(finite)) \
            and np.unique(finite).size <= MAX_GUESSED_CLASSES:
        return "classification"
    return "regression"


FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"
FASHION_MNIST_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                       "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def _read_idx(path):
    """An IDX file (gzip): big-endian magic (0, 0, dtype 0x08 = ubyte, ndim), dims, data."""
    import gzip

    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise DataError(f"{path}: not an IDX ubyte file")
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">u4", count=ndim, offset=4).astype(np.int64)
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise DataError(f"{path}: {data.size} values for shape {tuple(dims)}")
    return data.reshape(tuple(dims))


class FashionMNIST(DatasetLoader):
    """Fashion-MNIST (Xiao et al. 2017), 70,000 28x28 grey images, 10 classes, from
    Debian's dataset-fashion-mnist files; pixels scaled to [0, 1].  The official
    60k/10k split is pooled: the split is the seeded one of every dataset."""

    KEYS = ("path",)

    def shape(self, cfg):
        return (70000, 784)

    def load(self, cfg, seed):
        return _fashion_mnist(cfg)


def _fashion_mnist(cfg):
    folder = os.path.expanduser(cfg.path or FASHION_MNIST_DIR)
    missing = [f for f in FASHION_MNIST_FILES if not os.path.isfile(os.path.join(folder, f))]
    if missing:
        raise DataError(f"dataset=fashion_mnist: {', '.join(missing)} not found in {folder}; "
                        "install them with `sudo apt-get install dataset-fashion-mnist` or set "
                        "dataset.path=<folder with the IDX .gz files>")
    Xs, ys = [], []
    for img, lab in (FASHION_MNIST_FILES[:2], FASHION_MNIST_FILES[2:]):
        X = _read_idx(os.path.join(folder, img))
        y = _read_idx(os.path.join(folder, lab))
        if X.ndim != 3 or y.ndim != 1 or X.shape[0] != y.shape[0]:
            raise DataError(f"dataset=fashion_mnist: {img} / {lab} shapes {X.shape} / {y.shape} "
                            "do not match")
        Xs.append(X.reshape(X.shape[0], -1))
        ys.append(y)
    X = np.concatenate(Xs).astype(np.float64) / 255.0
    info = dict(task="classification", licence="MIT (Zalando Research)",
                source=f"Fashion-MNIST (Xiao, Rasul, Vollgraf 2017), {folder}")
    return X, np.concatenate(ys).astype(np.int64), info


#: folders searched for mlbench's .rda files (dataset.path overrides): an extracted copy
#: (docs/quickstart.md: apt-get download r-cran-mlbench, no R needed), then R's site libraries
MLBENCH_DIRS = ("~/.local/share/rffbench/mlbench", "/usr/lib/R/site-library/mlbench/data",
                "/usr/local/lib/R/site-library/mlbench/data")
MLBENCH_INSTALL = ("apt-get download r-cran-mlbench && dpkg-deb -x r-cran-mlbench_*.deb "
                   "/tmp/mlbench && mkdir -p ~/.local/share/rffbench && cp -r "
                   "/tmp/mlbench/usr/lib/R/site-library/mlbench/data "
                   "~/.local/share/rffbench/mlbench")
MLBENCH_LICENCE = ("UCI Machine Learning Repository, CC BY 4.0; as distributed in Debian's "
                   "r-cran-mlbench (GPL-2)")


def _mlbench_dir(cfg, file):
    dirs = [cfg.path] if cfg.path else list(MLBENCH_DIRS)
    env = os.environ.get("RFFBENCH_MLBENCH_DIR")
    if env and not cfg.path:
        dirs.insert(0, env)
    for d in dirs:
        d = os.path.expanduser(d)
        if os.path.isfile(os.path.join(d, file)):
            return d
    raise DataError(f"dataset={cfg.name}: {file} not found in {', '.join(dirs)}; get mlbench's "
                    f"data files (no R needed): `{MLBENCH_INSTALL}`, or `sudo apt-get install "
                    "r-cran-mlbench`, or set dataset.path=<folder with the .rda files>")


@functools.lru_cache(maxsize=4)
def _read_mlbench(name, path, mtime, target):
    """(X, y) of an mlbench .rda file; cached per process (a sweep's runs read it once)."""
    import warnings

    import rdata

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Unknown encoding"
            frames = rdata.read_rda(path)
    except Exception as exc:
        raise DataError(f"dataset={name}: cannot read {path}: {type(exc).__name__}: "
                        f"{exc}") from None
    import pandas as pd

    df = next(iter(frames.values()), None)
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"dataset={name}: {path} holds no data frame (found "
                        f"{type(df).__name__}): not mlbench's file")
    if target not in df.columns:
        raise DataError(f"dataset={name}: {path} has no column {target!r}")
    feats = df.drop(columns=[target])
    X = np.column_stack([np.asarray(feats[c].astype(str).astype(np.float64))
                         if feats[c].dtype.name == "category" else
                         np.asarray(feats[c], dtype=np.float64) for c in feats.columns])
    return X, np.asarray(df[target].cat.codes, dtype=np.int64)


class MLBench(DatasetLoader):
    """One data frame of R's mlbench package (an .rda file read by the ``rdata``
    package): every column but ``target`` is a feature (factors of numbers, as DNA's 0/1
    indicators, become numbers), ``target`` the class."""

    KEYS = ("path",)

    def __init__(self, file, target, about, shape):
        self.file, self.target, self.about, self._shape = file, target, about, shape
        self.__doc__ = f"{about} (classification)"

    def shape(self, cfg):
        return self._shape

    def load(self, cfg, seed):
        folder = _mlbench_dir(cfg, self.file)
        path = os.path.join(folder, self.file)
        X, y = _read_mlbench(cfg.name, path, os.path.getmtime(path), self.target)
        return X.copy(), y.copy(), dict(task="classification", licence=MLBENCH_LICENCE,
                                        source=f"{self.about} (R mlbench, {path})")


UCI = "UCI Machine Learning Repository (via scikit-learn), CC BY 4.0"
DATASETS = Registry("rffbench.datasets", "dataset", {
    "synthetic": Synthetic(),
    "digits": SklearnDataset("load_digits", "classification",
                             "scikit-learn load_digits: 8x8 handwritten digits (UCI)", UCI,
                             (1797, 64)),
    "breast_cancer": SklearnDataset("load_breast_cancer", "classification",
                                    "scikit-learn load_breast_cancer: Wisconsin diagnostic (UCI)",
                                    UCI, (569, 30)),
    "wine": SklearnDataset("load_wine", "classification", "scikit-learn load_wine (UCI)", UCI,
                           (178, 13)),
    "diabetes": SklearnDataset("load_diabetes", "regression",
                               "scikit-learn load_diabetes (Efron et al. 2004)",
                               "distributed with scikit-learn, BSD-3-Clause", (442, 10)),
    "fashion_mnist": FashionMNIST(),
    "letter": MLBench("LetterRecognition.rda", "lettr",
                      "Letter recognition (Slate 1991): 20,000 x 16 glyph features, 26 classes",
                      (20000, 16)),
    "satellite": MLBench("Satellite.rda", "classes",
                         "Statlog Landsat satellite: 6,435 x 36 multi-spectral pixels, 6 classes",
                         (6435, 36)),
    "shuttle": MLBench("Shuttle.rda", "Class",
                       "Statlog shuttle: 58,000 x 9 sensor values, 7 classes (80% class 1)",
                       (58000, 9)),
    "dna": MLBench("DNA.rda", "Class",
                   "Statlog DNA splice junctions: 3,186 x 180 binary indicators, 3 classes",
                   (3186, 180)),
    "file": UserFile(),
}, loader_check)


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
        if _streamed_format(cfg) == "npy":
            return int(read_npy_header(path, "dataset.path")[0][0])
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception:
        return 0


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


def scale_by_max(X_train, X_test):
    """Both parts divided by the largest |value| of the training rows (one number for every
    column: the quadrature papers' x / x.max(), which keeps the kernel's geometry)."""
    peak = float(np.max(np.abs(X_train)))
    peak = peak if peak > 0 else 1.0
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


def _streamed_format(cfg):
    """'npy' | 'parquet' when ``dataset`` is a file read by rffbench.stream, else None."""
    if cfg.name != "file" or not cfg.path:
        return None
    fmt = cfg.format or _infer_format(cfg.path)
    return fmt if fmt in STREAM_FORMATS else None


def load_dataset(cfg, seed=0, dtype="float64") -> Dataset:
    """Load, check, subsample, split, standardise and cast one dataset (a .npy or
    .parquet file: streamed, see rffbench.stream)."""
    if _streamed_format(cfg):
        return _load_streamed(cfg, seed, dtype)
    from .plugins import load_with

    where = f"dataset={cfg.name}" + (f" ({cfg.path})" if cfg.name == "file" else "")
    if cfg.name not in DATASETS.builtins():
        where += f" ({DATASETS.describe(cfg.name)})"
    X, y, info = load_with(as_loader(DATASETS[cfg.name]), cfg, seed, where)
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
    elif cfg.scale == "max":
        Xtr, Xte, peak = scale_by_max(Xtr, Xte)
        notes.append(f"every value divided by the training rows' largest |value| {peak:.6g}")
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
    if diameter is not None and cfg.scale == "max":
        diameter /= peak
    return Dataset(name=cfg.name, task=task, X_train=np.ascontiguousarray(Xtr, dtype=dt),
                   y_train=ytr, X_test=np.ascontiguousarray(Xte, dtype=dt), y_test=yte,
                   source=info["source"], licence=info["licence"], diameter=diameter,
                   notes=notes)


def _load_streamed(cfg, seed, dtype):
    """A .npy/.parquet file: one checking pass (rffbench.stream.scan), then lazy train
    and test matrices over the file."""
    from .stream import StreamedMatrix, scan

    path = data_file(cfg)
    fmt = _streamed_format(cfg)
    limit = MAX_ABS_VALUE if np.dtype(dtype) == np.float64 else MAX_ABS_VALUE_F32
    sc = scan(cfg, path, fmt, seed, dtype, (limit, MAX_ABS_VALUE))
    where = sc["where"]
    ytr, yte = sc["y_train"], sc["y_test"]
    task = cfg.file_task or _guess_task(ytr)
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
