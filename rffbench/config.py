"""Structured configs (Hydra ConfigStore) and their range checks.

The dataclasses give Hydra the schema (unknown keys and wrong types are
rejected while composing).  Range checks live in ``__post_init__`` and run
when :func:`validate` turns the composed DictConfig into these objects
(``OmegaConf.to_object``), i.e. before any work; each raises a one-line
:class:`~rffbench.errors.ConfigError` naming the key, the bad value and what is
allowed.

The ``measure`` block is built from the registered measurements, each of which
declares its own ``Config`` dataclass (:mod:`rffbench.measure.base`); the ``kernel``,
``features`` and ``dataset`` blocks from the registered units' declarations
(:mod:`rffbench.unit_blocks`, re-exported here).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from .checks import (
    Applies,
    Check,
    Int,
    Numbers,
    OneOf,
    Real,
    check_constraints,
    check_effects,
    closest,
    positive_number,
    require,
)
from .errors import ConfigError, first_line
from .exact import CG_CONSTRAINTS, CG_DEFAULTS, SOLVERS
from .features.base import RUN_DEVICES, compute_device
from .measure import measure_config_class
from .models import SGD_LOSSES
from .unit_blocks import (  # noqa: F401  (the units' blocks, part of this module's API)
    KERNEL_KEYS,
    LOADER_KEYS,
    MAP_KEYS,
    OWN_KEYS,
    SCALES,
    SPLITS,
    DatasetBlock,
    DatasetConfig,
    FeaturesBlock,
    FeaturesConfig,
    KernelBlock,
    KernelConfig,
    block_from_declarations,
    chosen_reads,
)

DTYPES = ("float64", "float32")
#: the largest seed: scikit-learn's random_state (the train/test split) takes 0..2**32 - 1
MAX_SEED = 2**32 - 1
#: D_unit: D (and D_n) count output columns, or frequencies (random directions)
D_UNITS = ("output", "frequencies")
#: model.epochs at most (sgd's passes over the training set; 10^8 ran for ever)
MAX_EPOCHS = 100000
#: the package's conf/ (a link to the repository's): a group option with a yaml file there
#: is Hydra's; every other registered name is stored in the ConfigStore
CONF_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conf")
#: the config groups whose option is the block's ``name`` (dataset=letter: dataset.name)
NAMED_GROUPS = ("dataset", "kernel", "features", "model")
#: report.center: how the report summarises runs that differ only in their seed
CENTERS = ("median", "mean")
#: report.interval: the confidence interval of a mean over seeds (rffbench.report.intervals)
INTERVALS = ("lognormal", "t", "percentile", "bca", "expanded")
#: the intervals that resample the seeds (report.resamples)
BOOTSTRAPS = ("percentile", "bca", "expanded")
#: report.latex: the report's tables also as LaTeX files, numbers plain or as siunitx's
#: \num{}, or none
LATEX_FORMS = ("plain", "siunitx", "none")


def _backends():
    from .backends import BACKENDS

    return BACKENDS


def _models():
    from .models import MODELS

    return MODELS


@dataclass
class ModelConfig:
    """model/: the model trained on the random features (exact KRR is the baseline)."""

    #: the model on the features (model=NAME: conf/model/)
    name: str = "ridge"
    #: ridge parameter (same for exact KRR), a number > 0, or auto = the best of
    #: lam_grid on a validation split of the training set
    lam: Any = "auto"
    #: lam=auto: the candidates, each > 0
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
    cg_tol: float = CG_DEFAULTS["cg_tol"]
    #: cg: iterations at most
    cg_max_iter: int = CG_DEFAULTS["cg_max_iter"]
    #: cg: rank of the Nystrom preconditioner (null = min(n_train, 2000))
    precond_rank: Optional[int] = CG_DEFAULTS["precond_rank"]
    #: cg: the kernel products' tiles in float64, or mixed = float32 tiles with float64
    #: sums and recurrences (about 1.6x faster; kernel values to ~1e-7 relative)
    exact_precision: str = CG_DEFAULTS["exact_precision"]
    #: rows per feature chunk (ridge accumulation, sgd batches); null = ~4M elements
    chunk_rows: Optional[int] = None
    #: sgd: passes over the data, and the scikit-learn loss (null: squared_error / hinge)
    epochs: int = 5
    #: sgd: scikit-learn's loss (null: squared_error for regression, hinge for classes)
    loss: Optional[str] = None

    constraints = {
        "lam": Check(lambda v: v == "auto" or positive_number(v), "use a number > 0 or auto",
                     [0, -1.0, float("nan"), "x", None]),
        "lam_grid": Numbers(0, strict=True),
        "val_size": Real(gt=0, lt=1, text="use a number with 0 < val_size < 1"),
        "exact_max_n": Int(1),
        "exact_solver": OneOf(SOLVERS),
        "chunk_rows": Int(1, none=True),
        "epochs": Int(1, MAX_EPOCHS, text=f"use an integer in 1..{MAX_EPOCHS} (passes over the "
                                          "training set)"),
        "loss": OneOf(sorted(set(SGD_LOSSES["regression"]) | set(SGD_LOSSES["classification"])),
                      none=True),
        **CG_CONSTRAINTS,
    }

    def __post_init__(self):
        from .models import MODELS

        require(self.name in MODELS, "model.name", self.name, f"use one of {', '.join(MODELS)}")
        if isinstance(self.lam, str) and self.lam != "auto":
            try:
                self.lam = float(self.lam)
            except ValueError:
                pass
        check_constraints(self, "model")
        self.lam = self.lam if self.lam == "auto" else float(self.lam)


def _exact(c):
    return c.measure.learning.exact


def _model_reads(key):
    """Applies: a model key read by the chosen model (center: or by exact KRR), when the
    learning measurement runs."""
    reads = chosen_reads("model", key, _models, lambda cls: cls.KEYS)

    def when(c):
        return reads.when(c) or (key == "center" and _exact(c))

    def why(c):
        return reads.why(c) + (" (nor exact KRR: measure.learning.exact=false)"
                               if key == "center" else "")
    return Applies(when, why)


#: exact KRR's conjugate-gradient keys
CG_KEYS = tuple(CG_DEFAULTS)
NO_EXACT = "measure.learning.exact=false: no exact KRR baseline"

#: where the model block's keys have an effect (the block is inert while learning is off)
ModelConfig.applies = {
    **{k: Applies(lambda c: c.model.lam == "auto", lambda c: (
        f"model.lam={c.model.lam!r} is fixed: only model.lam=auto chooses it on a "
        "validation split")) for k in ("lam_grid", "val_size")},
    **{k: Applies(_exact, NO_EXACT) for k in ("exact_max_n", "exact_solver")},
    **{k: Applies(lambda c: _exact(c) and c.model.exact_solver != "cholesky", lambda c: (
        NO_EXACT if not _exact(c) else
        "model.exact_solver=cholesky: only the cg solver uses it")) for k in CG_KEYS},
    **{k: _model_reads(k) for k in ("center", "epochs", "loss")},
}


#: backend.timeout at most (a day): a larger wait is no bound at all (and overflows the
#: event loop's clock: backend.timeout=1e300 waited forever)
MAX_TIMEOUT_S = 86400


@dataclass
class BackendConfig:
    """backend: where the ridge accumulation and exact KRR's kernel products run."""

    #: local (this process) or dask (pip install 'rffbench[dask]')
    name: str = "local"
    #: dask: a scheduler address (tcp://host:8786), or null = a LocalCluster of `workers`
    #: processes with `threads_per_worker` threads each
    address: Optional[str] = None
    #: dask LocalCluster: worker processes
    workers: int = 2
    #: dask LocalCluster: threads per worker
    threads_per_worker: int = 1
    #: dask: seconds to wait for the scheduler, and for a worker while none is left
    #: (then one line and exit 1 instead of waiting forever)
    timeout: float = 60.0

    constraints = {
        "name": OneOf(_backends),
        "workers": Int(1), "threads_per_worker": Int(1),
        "timeout": Real(ge=1, le=MAX_TIMEOUT_S, text=f"use a number of seconds in [1, "
                                                     f"{MAX_TIMEOUT_S}] (a day)"),
    }

    def __post_init__(self):
        check_constraints(self, "backend")
        if self.address is not None:
            from .backends import normalise_address

            normalise_address(self.address)  # ConfigError naming the key


def _backend_used(c):
    from .models import MODELS

    return MODELS[c.model.name].USES_BACKEND or (_exact(c) and c.model.exact_solver != "cholesky")


#: where the backend block's keys have an effect (the block is inert while learning is off)
BackendConfig.applies = {
    "name": Applies(_backend_used, lambda c: (
        f"model={c.model.name} trains here and exact KRR "
        + ("is off" if not _exact(c) else "by Cholesky runs here")
        + ": only ridge's accumulation and exact KRR's cg run on a backend")),
    **{k: Applies(lambda c: c.backend.name == "dask", "backend.name=local: it is a setting "
                  "of backend.name=dask") for k in ("address", "timeout")},
    **{k: Applies(lambda c: c.backend.name == "dask" and c.backend.address is None, lambda c: (
        "backend.name=local: it is a setting of backend.name=dask" if c.backend.name != "dask"
        else "backend.address is set: the cluster there has its own workers"))
       for k in ("workers", "threads_per_worker")},
}


@dataclass
class ReportConfig:
    """report: how the report summarises a sweep (never part of a run's identity)."""

    #: runs that differ only in their seed: their mean with its confidence interval
    #: (report.interval, whose coverage is measured), or median with a min-max band (a
    #: range, not an interval)
    center: str = "mean"
    #: the mean's interval (report.center=mean): lognormal (Cox's, for positive values; t
    #: where a value is not), t, or the bootstrap's percentile, bca, expanded percentile.
    #: lognormal is the one whose coverage held 93-97% at 3, 5 and 10 seeds
    #: (docs/sweeps.md, "Intervals")
    interval: str = "lognormal"
    #: the intervals' confidence level
    level: float = 0.95
    #: the bootstrap intervals' resamples (drawn from a fixed seed: reproducible)
    resamples: int = 2000
    #: the report at the end of a sweep also writes each figure as a PDF beside its PNG
    #: (vector copies for a paper); false: PNGs only, about 40% less drawing (as
    #: ``rffbench-report --no-pdf``)
    pdf: bool = True
    #: each table also as ``report/latex/NAME.tex`` (booktabs, each value with its interval,
    #: bold by Welch's t: rffbench.report.latex), numbers plain or as siunitx's ``\num{}``;
    #: none: no LaTeX files (``rffbench-report --tables`` overrides it)
    latex: str = "plain"

    constraints = {"center": OneOf(CENTERS), "interval": OneOf(INTERVALS),
                   "level": Real(ge=0.5, lt=1.0), "resamples": Int(100),
                   "latex": OneOf(LATEX_FORMS)}
    applies = {
        **{k: Applies(lambda c: c.report.center == "mean",
                      "report.center=median: the band is the seeds' min to max")
           for k in ("interval", "level")},
        "resamples": Applies(
            lambda c: c.report.center == "mean" and c.report.interval in BOOTSTRAPS,
            lambda c: ("report.center=median: the band is the seeds' min to max"
                       if c.report.center != "mean" else
                       f"report.interval={c.report.interval} resamples nothing"))}

    def __post_init__(self):
        check_constraints(self, "report")


#: the ``measure`` block: one field per registered measurement (built-ins and plug-ins),
#: each the measurement's own Config dataclass (rffbench.measure)
MeasureConfig = measure_config_class()


@dataclass
class Config:
    """Top level.  ``D`` is the output dimension of the feature map (``D_unit=output``),
    or the number of its frequencies (``D_unit=frequencies``: the output dimension then
    follows from the map and the kernel, e.g. 2 per frequency for cos/sin pairs)."""

    kernel: KernelConfig = field(default_factory=KernelConfig)
    features: FeaturesConfig = field(default_factory=FeaturesConfig)
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    measure: MeasureConfig = field(default_factory=lambda: MeasureConfig())
    backend: BackendConfig = field(default_factory=BackendConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    #: name of the experiment (a preset sets it); goes into every record
    experiment: str = "default"
    #: output dimension of the feature map (or its frequencies with D_unit=frequencies)
    D: int = 1024
    #: if set, D = 2 D_n (d + 1) for every map once d is known (the spherical-radial
    #: quadrature rules' natural sizes: D_n rules); D is then ignored
    D_n: Optional[int] = None
    #: output: D counts the map's output columns; frequencies: D (or 2 D_n (d + 1)) counts
    #: its frequencies (random directions), as papers that count them (quffka)
    D_unit: str = "output"
    #: frequencies, subsamples and the train/test split derive from it
    seed: int = 0
    #: numba + BLAS threads; null = NUMBA_NUM_THREADS, SLURM_CPUS_PER_TASK or all cores
    threads: Optional[int] = None
    #: float64 | float32: data and features
    dtype: str = "float64"
    #: cpu | cuda | cuda_sim: where the map's transforms and exact KRR's kernel products
    #: run (cuda: an NVIDIA GPU and pip install -e '.[gpu]'; cuda_sim: numba's CUDA
    #: simulator, NUMBA_ENABLE_CUDASIM=1, for tests; the maps draw their parameters on the
    #: host either way); the approximation measurement's exact Gram runs there too
    device: str = "cpu"

    constraints = {
        "dtype": OneOf(DTYPES),
        "device": OneOf(RUN_DEVICES),
        "seed": Int(0, MAX_SEED, text=f"use an integer in 0..{MAX_SEED} (what scikit-learn's "
                                      "splitter accepts)"),
        "D_n": Int(1, none=True, text="use an integer >= 1 (D = 2 D_n (d + 1)) or null (D as "
                                      "given)"),
        "D_unit": OneOf(D_UNITS),
        "threads": Int(1, none=True, text="use an integer >= 1 or null (all cores)"),
    }

    def __post_init__(self):
        from .features import FEATURE_MAPS

        check_constraints(self, "")
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
        self.check_measurements()
        self.check_effects()
        if self.device != "cpu":
            self.check_device()

    def check_device(self):
        """ConfigError for what device=cuda (or cuda_sim) cannot run: a map without a CUDA
        transform, a kernel that warps its inputs, exact KRR's Cholesky or a kernel without a GPU
        product, the speed measurement (the CPU's maps and peers side by side: the GPU's
        are ``python -m rffbench.bench --device cuda``), a Dask backend.  Whether a GPU is
        here is checked when the run starts (rffbench.cuda.unavailable), not here: a
        sweep's configs are read back on machines without one."""
        from .cuda import MAPS
        from .kernels import KERNELS

        tail = f"is not allowed with device={self.device}"
        require(self.features.name in MAPS, "features", self.features.name,
                f"device={self.device} needs a map with a CUDA transform: {', '.join(MAPS)} "
                "(or device=cpu)")
        kcls = KERNELS.find(self.kernel.name)
        if kcls is not None and getattr(kcls, "warps", False):
            raise ConfigError(f"kernel={self.kernel.name} {tail}: it warps its inputs before "
                              "the map, on the CPU only (use device=cpu)")
        if self.measure.speed.enabled:
            raise ConfigError(f"measure.speed.enabled=true {tail}: the speed measurement "
                              "times the CPU's maps and peers; the GPU's are timed by "
                              "python -m rffbench.bench --device cuda")
        if self.backend.name != "local":
            raise ConfigError(f"backend={self.backend.name} {tail}: the GPU path runs in this "
                              "process (use backend=local)")
        if self.measure.learning.enabled and self.measure.learning.exact:
            from .exact import choose_solver, cuda_profile
            from .kernels import make_kernel

            choose_solver(self.model.exact_solver, 1, device=compute_device(self.device))
            if kcls is not None:
                try:
                    cuda_profile(make_kernel(self.kernel.name, **self.kernel.kernel_params(
                        lengthscale=1.0)).fit(None))
                except ConfigError as exc:
                    raise ConfigError(f"{exc} (or measure.learning.exact=false: no exact "
                                      "baseline)") from None

    def check_measurements(self):
        """ConfigError when every measurement is off: a run would measure nothing (and
        write a records.csv holding only its compile time)."""
        from .measure import measurement_classes

        names = list(measurement_classes())
        if not any(getattr(getattr(self.measure, n, None), "enabled", False) for n in names):
            raise ConfigError("nothing to measure: every measure.<name>.enabled is false; "
                              f"enable one of {', '.join(names)} (e.g. "
                              f"measure.{names[0]}.enabled=true)")

    #: where the top-level keys have an effect
    applies = {"D": Applies(lambda c: c.D_n is None, "D_n is set: the output dimension is "
                                                     "2 D_n (d + 1)")}

    def check_choices(self, overrides=()):
        """ConfigError where a group chosen on the command line (``dataset=letter``) did not
        take effect: a preset that sets ``dataset.name`` in its body (after the command
        line's choice) overrules it.  Presets choose groups in their defaults lists."""
        for o in map(str, overrides):
            key, _, value = o.lstrip("+").partition("=")
            if o.startswith("~") or key not in NAMED_GROUPS or not value:
                continue
            chosen = getattr(self, key).name
            if chosen != value:
                by = (f"experiment={self.experiment}" if self.experiment != "default"
                      else "a config file")
                raise ConfigError(f"{key}={value} is not allowed here: {by} sets "
                                  f"{key}.name={chosen!r} after the command line's choice, "
                                  f"which would overrule it; use {key}.name={value} to "
                                  f"overrule the preset, or leave {key}= out")

    def check_single_run(self, overrides=()):
        """ConfigError for a key that only a sweep reads, set on the command line
        (``overrides``) of a run alone: the report block (a sweep's report summarises its
        seeds by it; one run has no report).  A preset's own value is not the user's."""
        given = {str(o).lstrip("+~").split("=", 1)[0] for o in overrides}
        check_effects(self.report, "report", self, {
            name: Applies(lambda c: False, "one run alone has no report: the report of a "
                                           "sweep (-m) reads it")
            for name in self.report.__dataclass_fields__ if f"report.{name}" in given})

    def inert_blocks(self):
        """The config blocks that do nothing here: each measurement that is off
        (``measure.<name>``) and the blocks that are its settings alone
        (Measurement.settings: model and backend for learning)."""
        from .measure import measurement_classes

        out = []
        for name, cls in measurement_classes().items():
            if not getattr(getattr(self.measure, name, None), "enabled", True):
                out += [f"measure.{name}", *cls.settings]
        return out

    def check_effects(self):
        """ConfigError naming the first key set where it has no effect (rffbench.checks
        .Applies: each block declares where its keys have one).  A measurement that is off
        keeps its settings (its block, and the blocks that are its settings alone: model
        and backend for learning): they are inert, not checked, and not part of the run's
        identity (rffbench.runid), so switching a measurement off is a toggle."""
        off = self.inert_blocks()
        check_effects(self, "", self)
        for name in ("kernel", "features", "dataset", "model", "backend", "report"):
            if name not in off:
                check_effects(getattr(self, name), name, self)
        for name in self.measure.__dataclass_fields__:
            if f"measure.{name}" not in off:
                block = getattr(self.measure, name)
                check_effects(block, f"measure.{name}", self, getattr(block, "applies", {}))

    def output_dim(self, d=None, D=None, D_n=None):
        """The map's output dimension: D, or 2 D_n (d + 1) (d: the data's dimension),
        converted from frequencies with ``D_unit=frequencies``; ``D`` or ``D_n`` given:
        for that value instead of the config's."""
        from .features import FEATURE_MAPS

        D, D_n = (self.D if D is None else D), (self.D_n if D_n is None else D_n)
        n = D if D_n is None else 2 * D_n * (d + 1)
        if self.D_unit == "frequencies":
            n = FEATURE_MAPS[self.features.name].n_components_for(
                n, self.kernel.name, **self.features.map_params())
        return n


def _schema_keys(prefix):
    """The keys of the config block at dotted ``prefix`` ('' = the top), from the schema."""
    import dataclasses

    cls = Config
    for part in [p for p in prefix.split(".") if p]:
        f = {f.name: f for f in dataclasses.fields(cls)}.get(part)
        t = None
        if f is not None:
            t = f.type if isinstance(f.type, type) else None
            if t is None and f.default_factory is not dataclasses.MISSING:
                t = type(f.default_factory())
        if t is None or not dataclasses.is_dataclass(t):
            return []
        cls = t
    return [f.name for f in dataclasses.fields(cls)]


def unknown_key_line(full_key):
    """One line for a key the schema does not have, with the closest one (or the keys)."""
    parent, _, last = str(full_key).rpartition(".")
    keys = _schema_keys(parent)
    near = closest(last, keys)
    where = f"{parent}." if parent else ""
    hint = (f" (did you mean {where}{near}?)" if near else
            f" ({parent or 'the top level'} has: {', '.join(keys)})" if keys else "")
    return f"{full_key} is not a key of rffbench's config{hint}"


_SCHEMA = {}


def _schema():
    """The structured schema of :class:`Config`, made once per ``measure`` block (~40 ms a
    time; merge copies it): a plug-in measurement rebuilds MeasureConfig, and the schema
    with it."""
    if MeasureConfig not in _SCHEMA:
        _SCHEMA.clear()
        _SCHEMA[MeasureConfig] = OmegaConf.structured(Config)
    return _SCHEMA[MeasureConfig]


def validate(cfg) -> Config:
    """Composed DictConfig -> checked :class:`Config` (ConfigError if invalid)."""
    if isinstance(cfg, Config):
        return cfg
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg, resolve=True)
        cfg.pop("hydra", None)
    try:
        return OmegaConf.to_object(OmegaConf.merge(_schema(), cfg))
    except ConfigError:
        raise
    except Exception as exc:  # omegaconf validation (type errors, unknown keys)
        from omegaconf.errors import ConfigAttributeError, ConfigKeyError

        key = getattr(exc, "full_key", None)
        if isinstance(exc, (ConfigKeyError, ConfigAttributeError)) and key:
            raise ConfigError(unknown_key_line(key)) from None
        msg = first_line(exc)
        raise ConfigError(f"{key}: {msg}" if key and key not in msg else msg) from None


def default_threads() -> int:
    """Threads when ``threads`` is null: NUMBA_NUM_THREADS, SLURM_CPUS_PER_TASK, else all cores."""
    for var in ("NUMBA_NUM_THREADS", "SLURM_CPUS_PER_TASK"):
        v = os.environ.get(var)
        if v and v.isdigit() and int(v) > 0:
            return int(v)
    return os.cpu_count() or 1


def register_configs() -> None:
    """Register the schema (conf/config.yaml lists ``base_config`` first) and a config-group
    option for every registered map, kernel and dataset, built-in or plug-in
    (``features=NAME``, ``kernel=NAME``, ``dataset=NAME`` work without a yaml file; a file
    conf/GROUP/NAME.yaml, where there is one, is found first and sets its keys).  The ``measure``
    block is rebuilt from the measurements
    installed now (a plug-in installed after this module was imported)."""
    global MeasureConfig
    from . import measure
    from .datasets import DATASETS
    from .features import FEATURE_MAPS
    from .kernels import KERNELS
    from .runid import forget_defaults

    measure.refresh()
    MeasureConfig = measure_config_class()
    forget_defaults()  # a run's id compares with the defaults of the block just rebuilt
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=Config)
    for group, registry in (("features", FEATURE_MAPS), ("kernel", KERNELS),
                            ("dataset", DATASETS)):
        for name in registry:  # built-ins and plug-ins alike: conf/GROUP/NAME.yaml is optional
            if not os.path.isfile(os.path.join(CONF_DIR, group, f"{name}.yaml")):
                cs.store(group=group, name=name, node={"name": name})



register_configs()
