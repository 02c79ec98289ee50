"""One run: configuration -> records (docs/architecture.md, "One run").

:func:`run` validates the config before any work, sets the thread limits,
loads the data, resolves the kernel's lengthscale on the training set, and
calls every enabled measurement.  :func:`main` is what ``run.py`` calls:
it writes ``records.csv`` atomically into the run directory, prints a compact
summary, and turns user errors into one line on stderr and exit code 2.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import zlib
from dataclasses import asdict, dataclass, field, replace
from typing import Optional

import numpy as np

from .clock import numba_totals
from .config import Config, default_threads, validate
from .datasets import DATASETS, Dataset, as_loader, data_plan, load_dataset
from .errors import ConfigError, RffbenchError
from .features.base import compute_device
from .interrupts import checkpoint, requested
from .jobs import Job
from .kernels import Kernel, data_rule, make_kernel
from .measure import measurement_classes
from .memory import Need, Plan
from .plugins import check_kernel, checked_map_class
from .results import RECORDS_FILE, params_text, records_frame
from .runid import changes, run_id

log = logging.getLogger("rffbench")


_RUNS_IN_PROCESS = 0


def process_age_s():
    """Seconds since this process started (Linux /proc), or None."""
    try:
        with open("/proc/self/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def apply_threads(threads):
    """Set numba's and the BLAS pools' thread counts; returns the count used."""
    import numba
    from threadpoolctl import threadpool_limits

    n = threads or default_threads()
    limit = numba.config.NUMBA_NUM_THREADS
    if n > limit:
        if threads is None:
            n = limit
        else:
            raise ConfigError(f"threads={n} is not allowed: use 1..{limit} (numba's pool size, "
                              "NUMBA_NUM_THREADS)")
    numba.set_num_threads(n)
    threadpool_limits(limits=n)
    return n


#: streamed data: maps and the median lengthscale are fitted on this many sampled rows
FIT_SAMPLE_ROWS = 65536


@dataclass
class RunContext:
    """What a measurement needs: the config, the data, the fitted kernel.

    ``tables`` collects extra per-run tables (file name -> DataFrame) that
    :func:`main` writes next to records.csv.
    """

    cfg: Config
    data: Dataset
    kernel: Optional[Kernel]  # set once the memory plan has passed
    threads: int
    tables: dict = field(default_factory=dict)
    #: wall seconds from interpreter start to the first measurement (None if unknown)
    startup_s: Optional[float] = None
    #: the sweep's store (None: a run alone), for results that runs share
    store: Optional[object] = None
    run_id: str = ""
    #: a sparse map's output columns once it is fitted on the training rows (the memory
    #: plan's second pass); None before, and for dense maps
    n_columns: Optional[int] = None

    @property
    def map_cls(self):
        """The run's map class (a plug-in's inside rffbench.plugins' checks)."""
        return checked_map_class(self.cfg.features.name)

    @property
    def map_params(self):
        """The map's configured parameters and the kernel's name (for memory_bytes)."""
        return dict(self.cfg.features.map_params(), kernel=self.cfg.kernel.name)

    @property
    def itemsize(self):
        return np.dtype(self.cfg.dtype).itemsize

    @property
    def device(self):
        """The device the run computes on (cuda for device=cuda_sim; the record and the id
        keep the config's value)."""
        return compute_device(self.cfg.device)

    @property
    def n_train(self):
        return self.data.X_train.shape[0]

    def rows_key(self):
        """(config key that sets the number of rows, its value now, n_train as a function
        of it): ``dataset.n`` for a source that generates its rows (one that declares the
        key ``n``: synthetic, friedman1, a plug-in's), ``dataset.n_max`` otherwise."""
        total = self.data.X_train.shape[0] + self.data.X_test.shape[0]
        ts = self.cfg.dataset.test_size
        keys = as_loader(DATASETS[self.cfg.dataset.name]).KEYS or {}
        key = "dataset.n" if "n" in keys else "dataset.n_max"
        return key, total, (lambda rows: rows - int(round(ts * rows)))

    def make_map(self, seed=None, name=None, kernel=None, D=None):
        """An unfitted feature map with this run's D (or ``D``): the run's map and its
        configured parameters, or map ``name`` with its defaults (seed: the run's by
        default)."""
        cls, params = (self.map_cls, self.cfg.features.map_params()) if name is None \
            else (checked_map_class(name), {})
        fmap = cls(kernel=kernel or self.kernel, n_components=self.cfg.D if D is None else D,
                   random_state=self.cfg.seed if seed is None else seed,
                   chunk_rows=self.cfg.features.chunk_rows, **params)
        # the run's device (a map named by a measurement, the speed one's, stays on the CPU)
        return fmap.on_device(self.device) if name is None else fmap

    @functools.cached_property
    def backend(self):
        """None (this process) or the rffbench.backends backend of ``backend``."""
        from .backends import get_backend

        return get_backend(self.cfg.backend)

    @functools.cached_property
    def fit_rows(self):
        """The rows maps and the median lengthscale are fitted on: the training set, or for
        streamed data (rffbench.stream) a seeded sample of at most FIT_SAMPLE_ROWS of it."""
        X = self.data.X_train
        if not self.data.streamed or X.shape[0] <= FIT_SAMPLE_ROWS:
            return np.asarray(X)
        idx = np.sort(self.rng("fit-rows").choice(X.shape[0], FIT_SAMPLE_ROWS, replace=False))
        return X[idx]

    def shared(self, name, key, compute):
        """``compute()``'s rows, computed once for every run of the sweeps of a results
        folder with the same ``key`` (a dict of what they depend on); a run alone just
        computes them."""
        if self.store is None:
            return compute()
        return self.store.shared(name, key, compute, self.run_id)

    def rng(self, purpose: str):
        """A Generator for one purpose, derived from the seed (stable across runs)."""
        return np.random.default_rng([self.cfg.seed, zlib.crc32(purpose.encode())])


def resolve_kernel(kcfg, X_train, seed) -> Kernel:
    """The run's kernel with a numeric lengthscale (median resolved on X_train)."""
    params = kcfg.kernel_params(lengthscale=kcfg.lengthscale, gamma=kcfg.gamma,
                                median_subsample=kcfg.median_subsample, random_state=seed)
    k = make_kernel(kcfg.name, **params).fit(X_train)
    params.update(lengthscale=k.lengthscale_, gamma=None)
    params.pop("median_subsample")  # resolved: no rule samples points any more
    resolved = make_kernel(kcfg.name, **params).fit(None)
    if kcfg.gamma is not None:  # its refusals name the key the user set
        resolved.scale_given = "gamma"
    return resolved


def run(cfg, threads=None, store=None, rid=None):
    """Run every enabled measurement of one configuration.

    ``threads`` (a launcher's share of the cores) is used when the config's
    ``threads`` is null; it is recorded but is not part of ``run_id``.  ``store``
    (a sweep's SweepStore) lets runs share results that do not depend on them all
    (RunContext.shared); ``rid`` the id its records carry (default: :func:`run_id`).
    Returns (records DataFrame, extra tables: file name -> DataFrame, each
    with the ``run_id`` column first).
    """
    conf = validate(cfg)
    check_device(conf.device)
    numba0 = numba_totals()
    threads = apply_threads(conf.threads or threads)
    data_plan(conf.dataset, conf.dtype).check()
    data = load_dataset(conf.dataset, seed=conf.seed, dtype=conf.dtype)
    for note in data.notes:
        log.info("dataset: %s", note)
    rid = rid or run_id(conf)
    given = conf
    if conf.D_n is not None or conf.D_unit != "output":
        # the output dimension from D_n and the data's dimension, or from frequencies; the
        # id and config.json keep the config as given
        conf = replace(conf, D=conf.output_dim(data.d), D_n=None, D_unit="output")
    ctx = RunContext(conf, data, None, threads, store=store, run_id=rid)
    with in_user_terms(given, conf):
        ctx.map_cls.check_data(conf.D, data.X_train.shape[0], data.d, **ctx.map_params)
    # the blocks of the schema this config was checked with, in the registry's order
    enabled = [(cls(), getattr(conf.measure, name))
               for name, cls in measurement_classes().items()
               if getattr(getattr(conf.measure, name, None), "enabled", False)]
    if conf.backend.name != "local":
        ctx.backend  # connects (or starts a LocalCluster); a missing extra stops here
    check_plan(ctx, enabled, given)  # every allocation that grows with n, d, D, before any
    ctx.kernel = kernel = resolve_kernel(conf.kernel, ctx.fit_rows, conf.seed)
    check_kernel(conf.kernel.name, kernel, ctx.fit_rows)  # a plug-in's Gram on the data
    check_kernel_on_data(kernel, data)
    check_frequency_range(kernel, data, conf)
    for m, block in enabled:  # every request checked before any measurement starts
        m.check(ctx, block)
    n_freq = ctx.map_cls.n_freq_for(conf.D, kernel.name, **conf.features.map_params())
    # output columns: D, or (binning) the bins the training set occupies (the fitted map's
    # output width, scikit-learn's _n_features_out)
    n_columns = conf.D
    if ctx.map_cls.tags.sparse_output:
        n_columns = ctx.n_columns = ctx.make_map().fit(ctx.fit_rows)._n_features_out
        check_plan(ctx, enabled, given)  # again, with the columns (ridge: primal or dual)
    log.info("run %s: %s on %s (n_train=%d, d=%d), kernel=%s lengthscale=%.4g, D=%d",
             rid, ctx.map_cls.name, data.name, data.X_train.shape[0], data.d,
             kernel.describe(), kernel.ls, conf.D)
    identity = dict(run_id=rid, experiment=conf.experiment, dataset=data.name,
                    task=data.task, n_train=data.X_train.shape[0], n_test=data.X_test.shape[0],
                    d=data.d, **_kernel_identity(conf, kernel), features=conf.features.name,
                    D=conf.D, n_freq=n_freq, n_columns=n_columns, seed=conf.seed,
                    dtype=conf.dtype, threads=threads, device=conf.device)
    rows = []
    global _RUNS_IN_PROCESS
    _RUNS_IN_PROCESS += 1
    if _RUNS_IN_PROCESS == 1:  # later runs of an in-process multirun did not start the process
        ctx.startup_s = process_age_s()
        if ctx.startup_s is not None:
            log.info("first measurement %.2f s after the interpreter started", ctx.startup_s)
    lost0 = _workers_lost(ctx)
    for m, block in enabled:
        checkpoint()
        rows.extend(m.run(ctx, block))
    rows.append(compile_record(numba0, numba_totals()))
    if lost0 is not None:  # Dask reschedules a lost worker's tasks: say that it happened
        rows.append(dict(measurement="learning", metric="dask_workers_lost", method="backend",
                         value=float(_workers_lost(ctx) - lost0),
                         note="Dask workers that left the cluster during this run; their "
                              "tasks were rescheduled (same results to the solver's tolerance)"))
    tables = {name: t.assign(run_id=identity["run_id"])[["run_id", *t.columns]]
              for name, t in ctx.tables.items()}
    return records_frame(identity, rows), tables


def check_kernel_on_data(kernel, data):
    """The kernel's domain and the size of its values on the data, before any measurement:
    on the rows (in memory), or on the training columns' ranges from the loading pass
    (streamed: a bound on the rows' norms)."""
    if data.streamed:
        kernel.check_domain(np.vstack(data.col_range), f"dataset={data.name}: the training data")
        radius = float(np.linalg.norm(np.maximum(np.abs(data.col_range[0]),
                                                 np.abs(data.col_range[1]))))
        kernel.check_values(radius, f"dataset={data.name}")
    else:
        for part, what in ((data.X_train, "the training data"), (data.X_test, "the test data")):
            kernel.check_domain(part, f"dataset={data.name}: {what}")
        kernel.check_values_on(data.X_train, data.X_test, what=f"dataset={data.name}")


def _kernel_identity(conf, kernel):
    """The records' columns that name the kernel: its name, nu (Matern's), its parameters
    and its resolved lengthscale."""
    return dict(kernel=kernel.name, nu=conf.kernel.nu if kernel.name == "matern" else None,
                kernel_params=params_text(conf.kernel.kernel_params()), lengthscale=kernel.ls)


def check_device(device):
    """ConfigError (one line) where ``device`` cannot run here, before any data is loaded
    or any stored run is looked for: for cuda, what is missing (NVIDIA's numba-cuda, CuPy,
    a GPU), or numba's CUDA simulator being on (its times are not a GPU's: that is
    device=cuda_sim); for cuda_sim, the simulator being off."""
    if device == "cpu":
        return
    from .cuda import require, simulated

    if device == "cuda" and simulated():
        raise ConfigError("device=cuda cannot run here: numba's CUDA simulator is on "
                          "(NUMBA_ENABLE_CUDASIM=1), its times are the CPU's, not a GPU's: "
                          "use device=cuda_sim (for tests) or unset NUMBA_ENABLE_CUDASIM")
    if device == "cuda_sim" and not simulated():
        raise ConfigError("device=cuda_sim cannot run here: it runs on numba's CUDA "
                          "simulator, which NUMBA_ENABLE_CUDASIM=1 in the environment turns on "
                          "(set before the command starts); on a GPU use device=cuda")
    require(device, named=f"device={device}")


def compile_record(before, after):
    """The run's cost of numba's compiler (rffbench.clock): seconds spent compiling or
    loading compiled code from numba's cache during the run, a record of its own (no
    measured time contains it; the startup time contains what came before the first
    measurement)."""
    from .results import record

    n = after["events"] - before["events"]
    c = after["compiles"] - before["compiles"]
    return record("timing", "compile_time_s", after["seconds"] - before["seconds"], "s",
                  method="numba", n_repeats=None,
                  note=f"numba's compiler during this run: {n} call(s) from Python "
                       f"(a compilation or a load from numba's cache each), {c} function(s) "
                       "compiled; no other time contains it (a timed call during which numba "
                       "compiled was timed again)")


@contextlib.contextmanager
def in_user_terms(given, conf):
    """A refusal about the output dimension D that the run derived from D_n or from D
    frequencies says so: the key the user set, their value and the conversion."""
    try:
        yield
    except ConfigError as exc:
        if exc.key != "D" or exc.value != conf.D or given.D == conf.D and given.D_n is None:
            raise
        how = (f"from D_n={given.D_n}: the output dimension 2 D_n (d + 1)"
               + (" in frequencies" if given.D_unit != "output" else "")
               if given.D_n is not None else f"from D={given.D} frequencies (D_unit="
                                              f"{given.D_unit})")
        raise ConfigError(f"D={conf.D} ({how}) is not allowed{exc.tail}", key="D",
                          value=conf.D, tail=exc.tail) from None


def _workers_lost(ctx):
    """Workers the Dask cluster lost so far (None on the local backend)."""
    if ctx.backend is None:
        return None
    from .backends import workers_lost

    return workers_lost(ctx.backend.client)


#: frequencies (about 1 / lengthscale) times the data must stay this far inside the dtype
FREQUENCY_HEADROOM = {"float64": 1e200, "float32": 1e30}


def check_frequency_range(kernel, data, conf):
    """|w.x| ~ max|x| / lengthscale must be representable in the run's dtype (float32:
    frequencies are cast to it)."""
    limit = FREQUENCY_HEADROOM[conf.dtype]
    peak = np.max(np.abs(np.vstack(data.col_range))) if data.streamed \
        else np.max(np.abs(data.X_train))
    scale = max(1.0, float(peak))
    if scale / kernel.ls > limit:
        raise ConfigError(f"kernel.lengthscale={kernel.ls:.3g} is not allowed with dtype="
                          f"{conf.dtype} and data up to {scale:.3g}: frequencies times the data "
                          f"(about {scale / kernel.ls:.3g}) leave {conf.dtype}'s range; use a "
                          f"lengthscale >= {scale / limit:.3g}"
                          + (" or dtype=float64" if conf.dtype == "float32" else ""))


def check_plan(ctx, enabled, given):
    """The run's memory plan checked (ConfigError naming the key to change); refusals name
    the key the user set (``given``: the config as given), in the user's unit."""
    plan = run_plan(ctx, enabled)
    d = ctx.data.d
    if given.D_n is not None:
        plan.in_user_units("D", "D_n", given.D_n, lambda u: given.output_dim(d, D_n=u))
    elif given.D_unit != "output":
        plan.in_user_units("D", "D", given.D, lambda u: given.output_dim(d, D=u))
    plan.set_by_user(changes(given))
    plan.check()


def run_plan(ctx, enabled):
    """The memory plan of a run once its data is loaded (rffbench.memory): the median
    lengthscale's distances, the map fitted for ``n_columns`` (sparse maps), and every
    enabled measurement's needs, each a phase of its own."""
    conf, data = ctx.cfg, ctx.data
    plan = Plan()
    if data_rule(conf.kernel.lengthscale) is not None:
        d, n = data.d, ctx.n_train

        knn = data_rule(conf.kernel.lengthscale)[0] == "knn"

        def median_bytes(v):
            m = min(n, v["kernel.median_subsample"])
            return 8.0 * (m * m * (2.5 if knn else 0.5) + m * d)  # knn: the square matrix

        plan.add("median", [Need(f"the {conf.kernel.lengthscale} lengthscale (pairwise "
                                 "distances of kernel.median_subsample training points)",
                                 median_bytes,
                                 {"kernel.median_subsample": (conf.kernel.median_subsample, 2)})])
    if ctx.map_cls.tags.sparse_output:
        key, total, n_train_of = ctx.rows_key()
        plan.add("n_columns", [Need(
            f"fitting features={ctx.map_cls.name} on the training set",
            lambda v: ctx.map_cls.memory_bytes(0, data.d, v["D"], ctx.itemsize,
                                               train_rows=n_train_of(v[key]), **ctx.map_params),
            {"D": (conf.D, 1), key: (total, 4)})])
    for m, block in enabled:
        plan.add(m.name, m.needs(ctx, block))
    return plan


def summary_table(df) -> str:
    """Compact text of one run's records: per measurement, metric values by
    (method, delta); pointwise rows (``dist`` set) and notes stay in the file."""
    import pandas as pd

    h = df.iloc[0].to_dict()
    out = [f"rffbench run {h['run_id']}: {h['features']} D={h['D']} | {h['kernel']} "
           f"l={h['lengthscale']:.4g} | {h['dataset']} n_train={h['n_train']} d={h['d']} | "
           f"{h['dtype']}, {h['threads']} threads"
           + (f", device={h['device']}" if h.get("device", "cpu") != "cpu" else "")]
    for name, part in df.groupby("measurement", sort=False):
        rows = part[part.dist.isna()].copy()
        rows["method"] = rows.method.fillna("")
        rows["delta"] = rows.delta.map(lambda v: "" if pd.isna(v) else f"{v:g}")
        rows["cell"] = rows.value.map(lambda v: "n/a" if pd.isna(v) else f"{v:.4g}")
        table = rows.set_index(["method", "delta", "metric"]).cell.unstack("metric", sort=False)
        text = table.fillna("").to_string()
        hidden = int(part.dist.notna().sum())
        more = f" (+{hidden} pointwise records)" if hidden else ""
        out.append(f"\n[{name}]{more}\n{text}")
    out.append("(n/a: not applicable or not available; the reason is in the note column)")
    return "\n".join(out)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C inside a run: its one line is printed; the entry point exits 130."""


def main(cfg, output_dir, sweep_dir=None, jobs_threads=None, overrides=()):
    """Run one configuration, write its records, print the summary; exit code.

    Alone (``sweep_dir`` None): records go into ``output_dir``.  In a sweep: records go
    into ``SWEEP/runs/<run_id>/`` (:mod:`rffbench.store`), the job directory
    ``output_dir`` gets a ``run`` link to it, and the job's ``overrides`` are recorded with
    its run_id for the report.  The storage protocol (resume, waiting for a run computed
    elsewhere, the store's copy, publishing) is :class:`rffbench.jobs.Job`'s.  A failure
    writes its one line to ``error.txt`` and returns its code instead of stopping the
    sweep; ``jobs_threads`` (cores / parallel jobs) is used when ``threads`` is null.
    Ctrl-C releases the run (resumable) and raises :class:`Interrupted` after one line.
    """
    job = Job(output_dir, sweep_dir, overrides)
    try:
        try:
            conf = validate(cfg)
            conf.check_choices(overrides)
            if not job.in_sweep:
                conf.check_single_run(overrides)
            check_device(conf.device)  # before a stored run is looked for: none is served
            rid = job.identify(conf)
        except RffbenchError as exc:
            return job.refused(exc)
        done = job.begin(conf, asdict(conf))
        if done is not None:
            return done
        log.info("run %s: measuring, records go to %s", rid, job.out / RECORDS_FILE)
        try:
            df, tables = run(conf, threads=jobs_threads if job.in_sweep else None,
                             store=job.store, rid=rid)
        except (Exception, SystemExit) as exc:  # each kind is one line: run_failure
            if requested():  # a library's own error after Ctrl-C landed in it
                raise KeyboardInterrupt from None
            code, message = run_failure(exc, job.in_sweep)
            return job.fail(code, message)
        path = job.finish(df, tables, asdict(conf))
    except KeyboardInterrupt:
        job.interrupted()
        raise Interrupted() from None
    except OSError as exc:  # the run or job directory cannot be created or written
        return job.os_failed(exc)
    finally:
        job.release()
    print(summary_table(df))
    print(f"records: {path}")
    log.info("wrote %d records to %s", len(df), path)
    return 0


def run_failure(exc, in_sweep):
    """(exit code, one line) for an exception raised while measuring; a bug is raised again
    outside a sweep (in a sweep the other jobs go on)."""
    if isinstance(exc, RffbenchError):
        return 2, str(exc)
    if isinstance(exc, OSError):
        return 2, f"{exc.filename or 'input'}: {exc.strerror or exc}"
    if isinstance(exc, MemoryError):
        return 2, (f"out of memory while measuring ({exc}); the memory plan did not foresee "
                   "this allocation: please report it, and lower D or the data size")
    if isinstance(exc, SystemExit):  # a plug-in's or a library's sys.exit inside the run
        return 3, (f"the run stopped: code inside it called sys.exit({exc.code!r}) (a "
                   "plug-in?); no records written")
    if not in_sweep:
        raise exc
    log.exception("run failed", exc_info=exc)
    return 3, f"internal error: {type(exc).__name__}: {exc}"
