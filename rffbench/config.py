"""Structured configs (Hydra ConfigStore) and their range checks.

The dataclasses give Hydra the schema (unknown keys and wrong types are
rejected while composing).  Range checks live in ``__post_init__`` and run
when :func:`validate` turns the composed DictConfig into these objects
(``OmegaConf.to_object``), i.e. before any work; each raises a one-line
:class:`~rffbench.errors.ConfigError` naming the key, the bad value and what is
allowed.

Adding a measurement: add its ``<Name>Config`` dataclass (``enabled`` + knobs),
a field on :class:`MeasureConfig`, and a function in ``rffbench.measure``.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from .errors import ConfigError

DTYPES = ("float64", "float32")
#: the largest seed: scikit-learn's random_state (the train/test split) takes 0..2**32 - 1
MAX_SEED = 2**32 - 1
TASKS = ("regression", "classification")
FILE_FORMATS = ("svmlight", "csv", "npz", "npy", "parquet")
#: dataset.scale: z-scores with training statistics, division by the training rows'
#: largest |value| (one number for every column), or the data as loaded
SCALES = ("standardize", "max", "none")
#: dataset.split: seeded shuffle (stratified for classes), or the file's order
SPLITS = ("random", "ordered")
#: measure.approximation.cross: K(M, M), or K(X, Y) of two halves of M, or of two
#: independent samples
CROSS_MODES = ("halves", "independent")
#: D_unit: D (and D_n) count output columns, or frequencies (random directions)
D_UNITS = ("output", "frequencies")
#: report.center: how the report summarises runs that differ only in their seed
CENTERS = ("median", "mean")


def _require(ok, key, value, allowed):
    if not ok:
        raise ConfigError(f"{key}={value!r} is not allowed: {allowed}")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class KernelConfig:
    """kernel/: which kernel and its parameters."""

    name: str = "gaussian"
    #: a number > 0, "median" (median pairwise distance of training points) or "knn<k>"
    #: (mean distance to the k-th nearest neighbour, e.g. knn50)
    lengthscale: Any = "median"
    #: scikit-learn's gamma instead of the lengthscale (gaussian 1/(2 l^2), laplacian 1/l)
    gamma: Optional[float] = None
    #: Matern smoothness, one of 0.5, 1.5, 2.5 (used by kernel=matern only)
    nu: float = 1.5
    #: polynomial: k = (x.y / l^2 + coef0)^degree
    degree: int = 2
    coef0: float = 1.0
    #: skewed_chi2: c of log(x + c) (scikit-learn's skewedness); data must be above -c
    skewedness: float = 1.0
    #: training points used by the median heuristic (seeded subsample)
    median_subsample: int = 1000

    def __post_init__(self):
        from .kernels import KERNELS, check_lengthscale

        KERNELS.get_or_raise(self.name, "kernel.name")
        self.lengthscale = check_lengthscale(self.lengthscale)
        if self.gamma is not None:
            KERNELS[self.name](lengthscale=self.lengthscale, gamma=self.gamma).fit(None)
        if self.name == "polynomial":  # their own range checks, before any work
            KERNELS[self.name](lengthscale=1.0, degree=self.degree, coef0=self.coef0).fit(None)
        if self.name == "skewed_chi2":
            KERNELS[self.name](lengthscale=1.0, skewedness=self.skewedness).fit(None)
        _require(self.nu in (0.5, 1.5, 2.5), "kernel.nu", self.nu, "use one of 0.5, 1.5, 2.5")
        _require(_is_int(self.median_subsample) and self.median_subsample >= 2,
                 "kernel.median_subsample", self.median_subsample, "use an integer >= 2")


@dataclass
class FeaturesConfig:
    """features/: which feature map."""

    name: str = "rff"
    #: rows per GEMM + cosine pass in transform; null = about 4M output elements
    chunk_rows: Optional[int] = None
    #: orf, sorf, fastfood, qmc: cos/sin pairs (D even) or cos + offset; null = map default
    pairs: Optional[bool] = None
    #: qmc: low-discrepancy sequence, sobol or halton
    sequence: str = "sobol"
    #: further keyword arguments of the map's class (plug-in maps), e.g. {alpha: 0.5}
    params: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        from .features import FEATURE_MAPS

        FEATURE_MAPS.get_or_raise(self.name, "features.name")
        _require(self.chunk_rows is None or self.chunk_rows >= 1, "features.chunk_rows",
                 self.chunk_rows, "use an integer >= 1 or null")
        cls = FEATURE_MAPS[self.name]
        common = {"kernel", "n_components", "lengthscale", "gamma", "random_state",
                  "chunk_rows"} | set(cls.CONFIG_PARAMS)
        extra = sorted(set(cls._get_param_names()) - common)
        for k in self.params:
            _require(k in extra, f"features.params.{k}", self.params[k],
                     f"features={self.name} takes " + (", ".join(extra) if extra else
                                                      "no further parameters"))
        if self.pairs is not None and "pairs" not in cls.CONFIG_PARAMS:
            raise ConfigError(f"features.pairs={self.pairs!r} is not allowed for "
                              f"features={self.name}: the map's form is fixed (use rff or "
                              "rff_pairs, or a map with a pairs option: orf, sorf, fastfood, qmc)")

    def map_params(self):
        """The chosen map's extra parameters (CONFIG_PARAMS) that are set."""
        from .features import FEATURE_MAPS

        params = {k: getattr(self, k) for k in FEATURE_MAPS[self.name].CONFIG_PARAMS
                  if getattr(self, k) is not None}
        return {**params, **self.params}


@dataclass
class DatasetConfig:
    """dataset/: which data, how it is split and scaled."""

    name: str = "digits"
    #: synthetic: number of points, input dimension, ball radius, target noise sd
    n: int = 2000
    d: Optional[int] = None
    radius: float = 1.0
    noise: float = 0.1
    #: synthetic: regression (smooth target) or classification (its sign)
    task: str = "regression"
    #: subsample the whole dataset to at most n_max rows (seeded; split=ordered: the
    #: first n_max rows); null = all
    n_max: Optional[int] = None
    test_size: float = 0.25
    #: random: seeded shuffle, stratified for classes; ordered: the file's order, the first
    #: rows train and the last test_size of them test (papers' "the first N rows")
    split: str = "random"
    #: standardize: z-scores with training statistics; max: every value divided by the
    #: training rows' largest |value| (the quadrature papers' x / x.max()); none: as loaded
    scale: str = "standardize"
    #: replaced by scale (true = standardize, false = none); setting it is an error
    standardize: Optional[bool] = None
    #: file: path, format (svmlight | csv | npz; inferred from the extension
    #: when null), target column (CSV: name or 0-based index; null = last)
    path: Optional[str] = None
    format: Optional[str] = None
    target: Optional[str] = None
    #: file: classification or regression; null = guess (integer targets with
    #: few distinct values are classification)
    file_task: Optional[str] = None

    def __post_init__(self):
        from .datasets import DATASETS

        DATASETS.get_or_raise(self.name, "dataset.name")
        _require(_is_int(self.n) and self.n >= 2, "dataset.n", self.n, "use an integer >= 2")
        _require(self.d is None or (_is_int(self.d) and self.d >= 1), "dataset.d", self.d,
                 "use an integer >= 1")
        _require(math.isfinite(self.radius) and self.radius > 0, "dataset.radius", self.radius,
                 "use a number > 0")
        _require(math.isfinite(self.noise) and self.noise >= 0, "dataset.noise", self.noise,
                 "use a number >= 0")
        _require(self.task in TASKS, "dataset.task", self.task, f"use one of {', '.join(TASKS)}")
        _require(self.file_task is None or self.file_task in TASKS, "dataset.file_task",
                 self.file_task, f"use one of {', '.join(TASKS)} or null")
        _require(self.n_max is None or (_is_int(self.n_max) and self.n_max >= 4), "dataset.n_max",
                 self.n_max, "use an integer >= 4 or null")
        _require(0 < self.test_size < 1, "dataset.test_size", self.test_size,
                 "use a number with 0 < test_size < 1")
        if self.standardize is not None:
            raise ConfigError(f"dataset.standardize={self.standardize!r} is not allowed: it was "
                              "replaced by dataset.scale (use dataset.scale=standardize, "
                              "dataset.scale=max or dataset.scale=none)")
        _require(self.scale in SCALES, "dataset.scale", self.scale,
                 f"use one of {', '.join(SCALES)}")
        _require(self.split in SPLITS, "dataset.split", self.split,
                 f"use one of {', '.join(SPLITS)}")
        _require(self.format is None or self.format in FILE_FORMATS, "dataset.format",
                 self.format, f"use one of {', '.join(FILE_FORMATS)} or null (from the extension)")
        if self.name == "file":
            _require(bool(self.path), "dataset.path", self.path,
                     "dataset=file needs dataset.path=<file> (.svm/.libsvm/.txt, .csv, .npz, or "
                     ".npy/.parquet, streamed)")
        elif self.name != "synthetic" and self.d is not None:
            raise ConfigError(f"dataset.d={self.d!r} is not allowed for dataset={self.name}: "
                              "d is fixed by the data (only dataset=synthetic takes d)")


def _check_n_points(key, value):
    _require(value is None or (_is_int(value) and value >= 2), key, value,
             "use an integer >= 2 (at most the training-set size) or null")


@dataclass
class ApproximationConfig:
    """measure.approximation: Gram-matrix error of the map against the exact kernel."""

    enabled: bool = True
    #: training points used (at most the training-set size); null = min(1000, n_train)
    n_points: Optional[int] = None
    #: false: the error of K(M, M); halves (or true): of K(X, Y), X and Y the two halves
    #: of the n_points (no diagonal); independent: X and Y two independent samples of
    #: n_points / 2 training points each (the quadrature papers' protocol)
    cross: Any = False
    #: independent draws of the map on the same points (seeds from the run seed): the
    #: records hold their mean (spread: standard deviation), approximation_redraws.csv each
    redraws: int = 1

    #: n_points when null (capped at the training-set size)
    DEFAULT_N_POINTS = 1000

    def __post_init__(self):
        _check_n_points("measure.approximation.n_points", self.n_points)
        cross = "halves" if self.cross is True else self.cross
        _require(cross is False or cross in CROSS_MODES, "measure.approximation.cross",
                 self.cross, f"use false, {', '.join(CROSS_MODES)} (true = halves)")
        self.cross = cross
        _require(_is_int(self.redraws) and self.redraws >= 1, "measure.approximation.redraws",
                 self.redraws, "use an integer >= 1")


BOUNDS_DIAMETERS = ("auto", "points", "domain")


@dataclass
class BoundsConfig:
    """measure.bounds: observed sup error over redraws of the map vs published bounds."""

    enabled: bool = True
    #: independent redraws of the map (>= 2)
    trials: int = 100
    #: points of the set M (at most the training-set size); null = min(300, n_train)
    n_points: Optional[int] = None
    #: failure probability, or a list of them, each in (0, 1)
    delta: Any = field(default_factory=lambda: [0.05])
    #: fixed pairs of M (spanning small to large distance) for the pointwise check
    pairs: int = 5
    #: diam(M) the bounds use: points = max pairwise distance of the points,
    #: domain = the data's true support (synthetic ball: 2 r), auto = domain if known
    diameter: str = "auto"

    DEFAULT_N_POINTS = 300

    def __post_init__(self):
        _require(_is_int(self.trials) and self.trials >= 2, "measure.bounds.trials", self.trials,
                 "use an integer >= 2")
        _check_n_points("measure.bounds.n_points", self.n_points)
        deltas = self.delta if isinstance(self.delta, (list, tuple)) else [self.delta]
        ok = len(deltas) >= 1 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                      and 0 < v < 1 for v in deltas)
        _require(ok, "measure.bounds.delta", self.delta,
                 "use a number in (0, 1) or a list of them, e.g. [0.05,0.01]")
        self.delta = sorted({float(v) for v in deltas}, reverse=True)
        _require(_is_int(self.pairs) and self.pairs >= 1, "measure.bounds.pairs", self.pairs,
                 "use an integer >= 1")
        _require(self.diameter in BOUNDS_DIAMETERS, "measure.bounds.diameter", self.diameter,
                 f"use one of {', '.join(BOUNDS_DIAMETERS)}")


@dataclass
class TimingConfig:
    """measure.timing: map fit and transform time on the training set."""

    enabled: bool = True
    #: warm repeats; the median and the spread (max - min) are recorded
    repeats: int = 3

    def __post_init__(self):
        _require(_is_int(self.repeats) and self.repeats >= 3, "measure.timing.repeats",
                 self.repeats, "use an integer >= 3")


@dataclass
class LearningConfig:
    """measure.learning: train/test error and time of the model on features vs exact KRR."""

    enabled: bool = True
    #: also fit exact kernel ridge (skipped with a note above model.exact_max_n)
    exact: bool = True
    #: a fit faster than cheap_s seconds is repeated this many times (median kept)
    repeats: int = 3
    cheap_s: float = 2.0

    def __post_init__(self):
        _require(_is_int(self.repeats) and self.repeats >= 1, "measure.learning.repeats",
                 self.repeats, "use an integer >= 1")
        _require(math.isfinite(self.cheap_s) and self.cheap_s >= 0, "measure.learning.cheap_s",
                 self.cheap_s, "use a number of seconds >= 0")


SPEED_PARTS = ("maps", "gram", "train")


@dataclass
class SpeedConfig:
    """measure.speed: rffbench vs numpy, scikit-learn and the machine's limit (off by default)."""

    enabled: bool = False
    #: interleaved warm repeats per implementation (>= 5); medians and spread recorded
    repeats: int = 5
    #: which comparisons: maps (transforms), gram (exact Gram), train (ridge / exact KRR)
    parts: List[str] = field(default_factory=lambda: ["maps", "gram", "train"])
    #: rffbench maps timed in the maps part (those that cannot represent the kernel are noted)
    maps: List[str] = field(default_factory=lambda: ["rff", "rff_pairs", "orf", "sorf",
                                                     "fastfood"])
    #: rows of the exact Gram comparison and of the training comparison
    gram_max_n: int = 10000
    train_max_n: int = 5000

    def __post_init__(self):
        _require(_is_int(self.repeats) and self.repeats >= 5, "measure.speed.repeats",
                 self.repeats, "use an integer >= 5")
        _require(len(self.parts) >= 1 and all(p in SPEED_PARTS for p in self.parts),
                 "measure.speed.parts", list(self.parts),
                 f"use a non-empty list of {', '.join(SPEED_PARTS)}")
        for key in ("gram_max_n", "train_max_n"):
            v = getattr(self, key)
            _require(_is_int(v) and v >= 2, f"measure.speed.{key}", v, "use an integer >= 2")


VARIANCE_PAIRS = ("grid", "data")


def _numbers(v, lo=0.0):
    return isinstance(v, (list, tuple)) and len(v) >= 1 and all(
        isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a) and a >= lo
        for a in v)


@dataclass
class VarianceConfig:
    """measure.variance: the estimate's mean squared error at pairs of points over redraws,
    against its formula (off by default; the formula presets turn it on)."""

    enabled: bool = False
    #: independent maps (>= 2); the MSE's standard error falls as 1/sqrt(redraws)
    redraws: int = 1000
    #: grid: every |x - y| in distances with every |x + y| in sums (lengthscales);
    #: data: n_pairs random pairs of training points
    pairs: str = "grid"
    distances: List[float] = field(default_factory=lambda: [0.25, 0.5, 1.0, 1.5, 2.0, 3.0])
    sums: List[float] = field(default_factory=lambda: [0.0])
    n_pairs: int = 20

    def __post_init__(self):
        _require(_is_int(self.redraws) and self.redraws >= 2, "measure.variance.redraws",
                 self.redraws, "use an integer >= 2")
        _require(self.pairs in VARIANCE_PAIRS, "measure.variance.pairs", self.pairs,
                 f"use one of {', '.join(VARIANCE_PAIRS)}")
        for key in ("distances", "sums"):
            v = list(getattr(self, key))
            _require(_numbers(v), f"measure.variance.{key}", v,
                     "use a non-empty list of numbers >= 0 (lengthscales), e.g. [0.5,1,2]")
        _require(_is_int(self.n_pairs) and self.n_pairs >= 1, "measure.variance.n_pairs",
                 self.n_pairs, "use an integer >= 1")


@dataclass
class MeasureConfig:
    approximation: ApproximationConfig = field(default_factory=ApproximationConfig)
    bounds: BoundsConfig = field(default_factory=BoundsConfig)
    learning: LearningConfig = field(default_factory=LearningConfig)
    speed: SpeedConfig = field(default_factory=SpeedConfig)
    timing: TimingConfig = field(default_factory=TimingConfig)
    variance: VarianceConfig = field(default_factory=VarianceConfig)


SGD_LOSSES = {
    "regression": ("squared_error", "huber", "epsilon_insensitive", "squared_epsilon_insensitive"),
    "classification": ("hinge", "log_loss", "modified_huber", "squared_hinge", "perceptron",
                       "squared_error"),
}


def _positive_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


@dataclass
class ModelConfig:
    """model/: the model trained on the random features (exact KRR is the baseline)."""

    name: str = "ridge"
    #: ridge parameter (same for exact KRR), a number > 0, or auto = the best of
    #: lam_grid on a validation split of the training set
    lam: Any = "auto"
    lam_grid: List[float] = field(default_factory=lambda: [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1,
                                                           1.0, 10.0])
    #: validation fraction of the training set for lam=auto
    val_size: float = 0.2
    #: targets' training mean as an unpenalised intercept
    center: bool = True
    #: exact KRR is skipped (with a note) above this many training rows
    exact_max_n: int = 10000
    #: exact KRR solver: cholesky (the n x n Gram), cg (conjugate gradients, the Gram
    #: never stored), auto = cholesky up to 10000 training rows when it fits, cg above
    exact_solver: str = "auto"
    #: cg: relative residual ||y - (K + lam I) alpha|| / ||y|| to reach, iteration cap,
    #: Nystrom preconditioner rank (null = min(n_train, 2000))
    cg_tol: float = 1e-6
    cg_max_iter: int = 200
    precond_rank: Optional[int] = None
    #: rows per feature chunk (ridge accumulation, sgd batches); null = ~4M elements
    chunk_rows: Optional[int] = None
    #: sgd: passes over the data, and the scikit-learn loss (null: squared_error / hinge)
    epochs: int = 5
    loss: Optional[str] = None

    def __post_init__(self):
        from .models import MODELS

        _require(self.name in MODELS, "model.name", self.name, f"use one of {', '.join(MODELS)}")
        lam = self.lam
        if isinstance(lam, str) and lam != "auto":
            try:
                lam = float(lam)
            except ValueError:
                pass
        _require(lam == "auto" or _positive_number(lam), "model.lam", self.lam,
                 "use a number > 0 or auto")
        self.lam = lam if lam == "auto" else float(lam)
        _require(len(self.lam_grid) >= 1 and all(_positive_number(v) for v in self.lam_grid),
                 "model.lam_grid", list(self.lam_grid), "use a non-empty list of numbers > 0")
        _require(0 < self.val_size < 1, "model.val_size", self.val_size,
                 "use a number with 0 < val_size < 1")
        _require(_is_int(self.exact_max_n) and self.exact_max_n >= 1, "model.exact_max_n",
                 self.exact_max_n, "use an integer >= 1")
        from .exact import SOLVERS, check_cg_params

        _require(self.exact_solver in SOLVERS, "model.exact_solver", self.exact_solver,
                 f"use one of {', '.join(SOLVERS)}")
        check_cg_params(self.cg_tol, self.cg_max_iter, self.precond_rank)
        _require(self.chunk_rows is None or (_is_int(self.chunk_rows) and self.chunk_rows >= 1),
                 "model.chunk_rows", self.chunk_rows, "use an integer >= 1 or null")
        _require(_is_int(self.epochs) and self.epochs >= 1, "model.epochs", self.epochs,
                 "use an integer >= 1")
        every = sorted(set(SGD_LOSSES["regression"]) | set(SGD_LOSSES["classification"]))
        _require(self.loss is None or self.loss in every, "model.loss", self.loss,
                 f"use one of {', '.join(every)} or null")


@dataclass
class BackendConfig:
    """backend: where the ridge accumulation and exact KRR's kernel products run."""

    #: local (this process) or dask (pip install 'rffbench[dask]')
    name: str = "local"
    #: dask: a scheduler address (tcp://host:8786), or null = a LocalCluster of `workers`
    #: processes with `threads_per_worker` threads each
    address: Optional[str] = None
    workers: int = 2
    threads_per_worker: int = 1

    def __post_init__(self):
        from .backends import BACKENDS

        _require(self.name in BACKENDS, "backend.name", self.name,
                 f"use one of {', '.join(BACKENDS)}")
        _require(_is_int(self.workers) and self.workers >= 1, "backend.workers", self.workers,
                 "use an integer >= 1")
        _require(_is_int(self.threads_per_worker) and self.threads_per_worker >= 1,
                 "backend.threads_per_worker", self.threads_per_worker, "use an integer >= 1")


@dataclass
class ReportConfig:
    """report: how the report summarises a sweep (never part of a run's identity)."""

    #: runs that differ only in their seed: median with a min-max band, or mean with a
    #: 95% t interval (as papers that report means)
    center: str = "median"

    def __post_init__(self):
        _require(self.center in CENTERS, "report.center", self.center,
                 f"use one of {', '.join(CENTERS)}")


@dataclass
class Config:
    """Top level.  ``D`` is the output dimension of the feature map (``D_unit=output``),
    or the number of its frequencies (``D_unit=frequencies``: the output dimension then
    follows from the map and the kernel, e.g. 2 per frequency for cos/sin pairs)."""

    kernel: KernelConfig = field(default_factory=KernelConfig)
    features: FeaturesConfig = field(default_factory=FeaturesConfig)
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    measure: MeasureConfig = field(default_factory=MeasureConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    #: name of the experiment (a preset sets it); goes into every record
    experiment: str = "default"
    D: int = 1024
    #: if set, D = 2 D_n (d + 1) for every map once d is known (the spherical-radial
    #: quadrature rules' natural sizes: D_n rules); D is then ignored
    D_n: Optional[int] = None
    #: output: D counts the map's output columns; frequencies: D (or 2 D_n (d + 1)) counts
    #: its frequencies (random directions), as papers that count them (quffka)
    D_unit: str = "output"
    seed: int = 0
    #: numba + BLAS threads; null = NUMBA_NUM_THREADS, SLURM_CPUS_PER_TASK or all cores
    threads: Optional[int] = None
    dtype: str = "float64"

    def __post_init__(self):
        from .features import FEATURE_MAPS

        _require(self.dtype in DTYPES, "dtype", self.dtype, f"use one of {', '.join(DTYPES)}")
        _require(_is_int(self.seed) and 0 <= self.seed <= MAX_SEED, "seed", self.seed,
                 f"use an integer in 0..{MAX_SEED} (what scikit-learn's splitter accepts)")
        _require(self.D_n is None or (_is_int(self.D_n) and self.D_n >= 1), "D_n", self.D_n,
                 "use an integer >= 1 (D = 2 D_n (d + 1)) or null (D as given)")
        _require(self.D_unit in D_UNITS, "D_unit", self.D_unit,
                 f"use one of {', '.join(D_UNITS)}")
        _require(self.threads is None or (_is_int(self.threads) and self.threads >= 1), "threads",
                 self.threads, "use an integer >= 1 or null (all cores)")
        cls = FEATURE_MAPS[self.features.name]
        cls.check_kernel(self.kernel.name)  # before what depends on it
        if self.features.pairs is not None:
            from .kernels import KERNELS

            kcls = KERNELS.find(self.kernel.name)
            if kcls is not None and not kcls.shift_invariant:
                raise ConfigError(f"features.pairs={self.features.pairs!r} is not allowed with "
                                  f"kernel={self.kernel.name}: cos/sin pairs or cos + offset are "
                                  "for shift-invariant kernels; the arc-cosine kernels take one "
                                  "step / relu feature per direction (leave features.pairs null)")
        if self.D_n is None:
            cls.check_params(self.output_dim(), self.kernel.name, **self.features.map_params())

    def output_dim(self, d=None):
        """The map's output dimension: D, or 2 D_n (d + 1) (d: the data's dimension),
        converted from frequencies with ``D_unit=frequencies``."""
        from .features import FEATURE_MAPS

        n = self.D if self.D_n is None else 2 * self.D_n * (d + 1)
        if self.D_unit == "frequencies":
            n = FEATURE_MAPS[self.features.name].n_components_for(
                n, self.kernel.name, **self.features.map_params())
        return n


def validate(cfg) -> Config:
    """Composed DictConfig -> checked :class:`Config` (ConfigError if invalid)."""
    if isinstance(cfg, Config):
        return cfg
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg, resolve=True)
        cfg.pop("hydra", None)
    try:
        return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(Config), cfg))
    except ConfigError:
        raise
    except Exception as exc:  # omegaconf validation (type errors, unknown keys)
        msg = str(exc).splitlines()[0]
        raise ConfigError(msg) from None


def default_threads() -> int:
    """Threads when ``threads`` is null: NUMBA_NUM_THREADS, SLURM_CPUS_PER_TASK, else all cores."""
    for var in ("NUMBA_NUM_THREADS", "SLURM_CPUS_PER_TASK"):
        v = os.environ.get(var)
        if v and v.isdigit() and int(v) > 0:
            return int(v)
    return os.cpu_count() or 1


def register_configs() -> None:
    """Register the schema (conf/config.yaml lists ``base_config`` first), a config-group
    option for every installed plug-in (``features=NAME``, ``kernel=NAME``,
    ``dataset=NAME`` then work without a yaml file) and the ``rffbench_help`` resolver
    of ``python run.py --help``."""
    from .datasets import DATASETS
    from .features import FEATURE_MAPS
    from .kernels import KERNELS

    cs = ConfigStore.instance()
    cs.store(name="base_config", node=Config)
    for group, registry in (("features", FEATURE_MAPS), ("kernel", KERNELS),
                            ("dataset", DATASETS)):
        for name in registry.plugin_names():
            cs.store(group=group, name=name, node={"name": name})

    def help_text():
        from .cli_help import help_text

        return help_text()

    OmegaConf.register_new_resolver("rffbench_help", help_text, replace=True)


register_configs()
