"""One run: configuration -> records (DESIGN.md section 1).

:func:`run` validates the config before any work, sets the thread limits,
loads the data, resolves the kernel's lengthscale on the training set, and
calls every enabled measurement.  :func:`main` is what ``run.py`` calls:
it writes ``records.csv`` atomically into the run directory, prints a compact
summary, and turns user errors into one line on stderr and exit code 2.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from .config import Config, default_threads, validate
from .datasets import Dataset, load_dataset
from .errors import ConfigError, RffbenchError
from .features import feature_map_class
from .kernels import Kernel, make_kernel
from .measure import MEASUREMENTS
from .results import ERROR_FILE, RECORDS_FILE, records_frame, write_atomic

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


def run_id(conf: Config) -> str:
    """Hash of the resolved configuration (same config -> same id)."""
    blob = json.dumps(asdict(conf), sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


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


@dataclass
class RunContext:
    """What a measurement needs: the config, the data, the fitted kernel.

    ``tables`` collects extra per-run tables (file name -> DataFrame) that
    :func:`main` writes next to records.csv.
    """

    cfg: Config
    data: Dataset
    kernel: Kernel
    threads: int
    tables: dict = field(default_factory=dict)
    #: wall seconds from interpreter start to the first measurement (None if unknown)
    startup_s: Optional[float] = None

    @property
    def map_cls(self):
        return feature_map_class(self.cfg.features.name)

    def make_map(self, seed=None, name=None, kernel=None):
        """An unfitted feature map with this run's D: the run's map and its configured
        parameters, or map ``name`` with its defaults (seed: the run's by default)."""
        cls, params = (self.map_cls, self.cfg.features.map_params()) if name is None \
            else (feature_map_class(name), {})
        return cls(kernel=kernel or self.kernel, n_components=self.cfg.D,
                   random_state=self.cfg.seed if seed is None else seed,
                   chunk_rows=self.cfg.features.chunk_rows, **params)

    def rng(self, purpose: str):
        """A Generator for one purpose, derived from the seed (stable across runs)."""
        return np.random.default_rng([self.cfg.seed, zlib.crc32(purpose.encode())])


def resolve_kernel(kcfg, X_train, seed) -> Kernel:
    """The run's kernel with a numeric lengthscale (median resolved on X_train)."""
    params = dict(lengthscale=kcfg.lengthscale, median_subsample=kcfg.median_subsample,
                  random_state=seed)
    if kcfg.name == "matern":
        params["nu"] = kcfg.nu
    k = make_kernel(kcfg.name, **params).fit(X_train)
    params["lengthscale"] = k.lengthscale_
    return make_kernel(kcfg.name, **params).fit(None)


def run(cfg, threads=None):
    """Run every enabled measurement of one configuration.

    ``threads`` (a launcher's share of the cores) is used when the config's
    ``threads`` is null; it is recorded but is not part of ``run_id``.
    Returns (records DataFrame, extra tables: file name -> DataFrame, each
    with the ``run_id`` column first).
    """
    conf = validate(cfg)
    threads = apply_threads(conf.threads or threads)
    data = load_dataset(conf.dataset, seed=conf.seed, dtype=conf.dtype)
    for note in data.notes:
        log.info("dataset: %s", note)
    kernel = resolve_kernel(conf.kernel, data.X_train, conf.seed)
    ctx = RunContext(conf, data, kernel, threads)
    ctx.map_cls.check_data(conf.D, data.X_train.shape[0])
    enabled = [(m, getattr(conf.measure, name)) for name, m in MEASUREMENTS.items()
               if getattr(conf.measure, name).enabled]
    for m, block in enabled:  # every request checked before any measurement starts
        if hasattr(m, "check"):
            m.check(ctx, block)
    n_freq = ctx.map_cls.n_freq_for(conf.D, **conf.features.map_params())
    # output columns: D, or (binning) the bins the training set occupies
    n_columns = ctx.make_map().fit(data.X_train).n_columns_ \
        if ctx.map_cls.sparse_output else conf.D
    rid = run_id(conf)
    log.info("run %s: %s on %s (n_train=%d, d=%d), kernel=%s lengthscale=%.4g, D=%d",
             rid, ctx.map_cls.name, data.name, data.X_train.shape[0], data.d,
             kernel.describe(), kernel.ls, conf.D)
    identity = dict(run_id=rid, experiment=conf.experiment, dataset=data.name,
                    task=data.task, n_train=data.X_train.shape[0], n_test=data.X_test.shape[0],
                    d=data.d, kernel=kernel.name,
                    nu=conf.kernel.nu if kernel.name == "matern" else None,
                    lengthscale=kernel.ls, features=ctx.map_cls.name, D=conf.D, n_freq=n_freq,
                    n_columns=n_columns,
                    seed=conf.seed, dtype=conf.dtype, threads=threads)
    rows = []
    global _RUNS_IN_PROCESS
    _RUNS_IN_PROCESS += 1
    if _RUNS_IN_PROCESS == 1:  # later runs of an in-process multirun did not start the process
        ctx.startup_s = process_age_s()
        if ctx.startup_s is not None:
            log.info("first measurement %.2f s after the interpreter started", ctx.startup_s)
    for m, block in enabled:
        rows.extend(m.measure(ctx, block))
    tables = {name: t.assign(run_id=identity["run_id"])[["run_id", *t.columns]]
              for name, t in ctx.tables.items()}
    return records_frame(identity, rows), tables


def summary_table(df) -> str:
    """Compact text of one run's records: per measurement, metric values by
    (method, delta); pointwise rows (``dist`` set) and notes stay in the file."""
    import pandas as pd

    h = df.iloc[0].to_dict()
    out = [f"rffbench run {h['run_id']}: {h['features']} D={h['D']} | {h['kernel']} "
           f"l={h['lengthscale']:.4g} | {h['dataset']} n_train={h['n_train']} d={h['d']} | "
           f"{h['dtype']}, {h['threads']} threads"]
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


def find_records(sweep_dir, rid):
    """A records.csv under ``sweep_dir`` (any depth) holding run ``rid``, or None."""
    import pandas as pd

    for f in sorted(Path(sweep_dir).rglob(RECORDS_FILE)):
        try:
            first = pd.read_csv(f, usecols=["run_id"], nrows=1, dtype=str)
        except (ValueError, OSError, pd.errors.ParserError, pd.errors.EmptyDataError):
            continue
        if len(first) and first.run_id.iloc[0] == rid:
            return f
    return None


def _fail(output_dir, code, message, in_sweep):
    print(f"rffbench: error: {message}", file=sys.stderr)
    if in_sweep:  # the report lists the job as failed with this line
        (Path(output_dir) / ERROR_FILE).write_text(message.splitlines()[0] + "\n")
    return code


def main(cfg, output_dir, sweep_dir=None, jobs_threads=None) -> int:
    """Run, write ``records.csv`` into ``output_dir``, print the summary; exit code.

    In a sweep (``sweep_dir`` given): a run whose ``run_id`` already has records
    anywhere under ``sweep_dir`` is skipped (resume); a failure writes its one
    line to ``error.txt`` in the job directory and returns its code instead of
    stopping the sweep; ``jobs_threads`` (derived from the launcher: cores /
    parallel jobs) is used when ``threads`` is null.
    """
    in_sweep = sweep_dir is not None
    out = Path(output_dir)
    (out / ERROR_FILE).unlink(missing_ok=True)
    try:
        conf = validate(cfg)
        rid = run_id(conf)
        if in_sweep:
            done = find_records(sweep_dir, rid)
            if done is not None:
                print(f"rffbench: run {rid} already has records in {done}: skipped (resume)")
                log.info("run %s already done (%s): skipped", rid, done)
                return 0
        log.info("run %s: measuring, records go to %s", rid, out / RECORDS_FILE)
        df, tables = run(conf, threads=jobs_threads if in_sweep else None)
    except RffbenchError as exc:
        return _fail(out, 2, str(exc), in_sweep)
    except Exception as exc:  # a bug: in a sweep, keep the other jobs going
        if not in_sweep:
            raise
        log.exception("run failed")
        return _fail(out, 3, f"internal error: {type(exc).__name__}: {exc}", in_sweep)
    if df.empty:
        return _fail(out, 2, "nothing measured (every measure.<name>.enabled is false); no "
                     "records written", in_sweep)
    for name, table in tables.items():  # records.csv last: its presence means complete
        write_atomic(table, out / name)
    path = write_atomic(df, out / RECORDS_FILE)
    print(summary_table(df))
    print(f"records: {path}")
    log.info("wrote %d records to %s", len(df), path)
    return 0
