"""Threads per job under Hydra launchers, so parallel jobs never oversubscribe.

``threads_per_job(launcher_cfg)``: the cores of this machine (or the SLURM
allocation) divided by the number of jobs the launcher runs at once, at least
1.  joblib: ``n_jobs`` (-1 or null = one job per core); submitit: the job's
``cpus_per_task``; ray: ``num_cpus`` in its remote options; the basic
launcher runs one job at a time (all cores).  Used only when ``threads`` is
null; the value is recorded in every record's ``threads`` column.
"""
from __future__ import annotations

import os

from .errors import first_line
from .memory import cores


def threads_per_job(launcher):
    """Threads for one job of a multirun launched by ``launcher`` (its config node)."""
    get = launcher.get if hasattr(launcher, "get") else (lambda k, d=None: d)
    target = str(get("_target_", "") or "")
    n = cores()
    if "joblib" in target.lower():
        jobs = get("n_jobs", -1)
        jobs = n if jobs in (None, -1) or jobs <= 0 else int(jobs)
        return max(1, n // jobs)
    if "submitit" in target.lower():
        cpus = get("cpus_per_task", None)
        return max(1, int(cpus)) if cpus else 1
    if "ray" in target.lower():
        opts = get("ray", {}) or {}
        remote = opts.get("remote", {}) if hasattr(opts, "get") else {}
        cpus = remote.get("num_cpus") if hasattr(remote, "get") else None
        return max(1, int(cpus)) if cpus else 1
    return n


# --------------------------------------------------------------------------
# a sweep's progress: "job i/N", with an estimate of the time left
# --------------------------------------------------------------------------
_SWEEPS = {}


def _total_jobs(sweep_dir):
    """The number of jobs of the sweep (its multirun.yaml expanded), or None."""
    from pathlib import Path

    from .report.collect import MULTIRUN_FILE, expand_jobs

    try:
        jobs = expand_jobs(Path(sweep_dir) / MULTIRUN_FILE)[1]
    except Exception:  # an unusual sweeper: the line says "job i"
        return None
    return len(jobs) if jobs is not None else None


def log_job(sweep_dir, num, launcher):
    """Log ``sweep: job i/N`` as a job of a multirun starts, with the time left at the
    rate of this process's jobs so far times the jobs the launcher runs at once."""
    import logging
    import time

    st = _SWEEPS.get(str(sweep_dir))
    if st is None:
        st = _SWEEPS[str(sweep_dir)] = dict(t0=time.perf_counter(), started=0,
                                            total=_total_jobs(sweep_dir))
    total, done = st["total"], st["started"]
    elapsed = time.perf_counter() - st["t0"]
    st["started"] += 1
    line = f"sweep: job {num + 1}" + (f"/{total}" if total else "")
    if done and total:
        from .progress import duration

        parallel = max(1, cores() // threads_per_job(launcher))
        left = elapsed / done * max(total - num, 0) / parallel
        line += f", {duration(elapsed)} elapsed here, about {duration(left)} left"
    logging.getLogger("rffbench").info(line)


# --------------------------------------------------------------------------
# the output directory, checked before Hydra writes into it
# --------------------------------------------------------------------------
def check_output_dir(path, key):
    """Create ``path`` (and parents) and prove it writable with a small probe file.

    Raises :class:`~rffbench.errors.RunDirError` with one line naming ``key``,
    the directory and the system's reason (read-only file system, a path under
    a file, a full disk, no permission); directories it created are removed
    again, so nothing is left behind.
    """
    from pathlib import Path

    from .errors import RunDirError

    if not str(path).strip():
        raise RunDirError(f"{key}='' is not allowed: give a directory (an empty one would be "
                          "the working directory)")
    p = Path(path)
    missing = []
    q = p
    while not q.exists() and q != q.parent:
        missing.append(q)
        q = q.parent
    probe = p / f".rffbench-write-test-{os.getpid()}"
    try:
        p.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as fh:
            fh.write(b"\0" * 65536)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        try:
            probe.unlink()
        except OSError:
            pass
        for d in missing:  # deepest first
            try:
                d.rmdir()
            except OSError:
                break
        why = exc.strerror or str(exc)
        raise RunDirError(f"{key}={str(path)!r}: cannot create or write this directory ({why}"
                          + (f": {exc.filename}" if exc.filename and str(exc.filename) != str(probe)
                             else "") + ")") from None
    finally:
        try:
            probe.unlink()
        except OSError:
            pass


def _callback_base():
    from hydra.experimental.callback import Callback

    return Callback


class RffbenchCallback(_callback_base()):
    """Hydra callback (conf/config.yaml ``hydra.callbacks``).

    * before a run or a sweep: its output directory must be creatable and
      writable (one line and exit 2 otherwise, before Hydra writes anything);
    * at the end of a multirun: the report (``SWEEP/report``, its figures also as PDF
      unless ``report.pdf=false``); exit 1 when the sweep is incomplete (failed, missing
      or damaged runs).
    """

    def __init__(self, report=True):
        self.report = report

    @staticmethod
    def _check(path, key):
        import sys

        from .errors import RunDirError

        try:
            check_output_dir(path, key)
        except RunDirError as exc:
            print(f"rffbench: error: {exc}", file=sys.stderr)
            raise SystemExit(2)

    def on_run_start(self, config, **kwargs):
        import sys

        from omegaconf import OmegaConf

        from .config import validate
        from .errors import ConfigError, RunDirError
        from .store import check_not_claimed

        try:  # a bad value before Hydra writes .hydra/ and run.log: nothing is left behind
            validate(OmegaConf.masked_copy(config, [k for k in config if k != "hydra"])) \
                .check_single_run(OmegaConf.select(config, "hydra.overrides.task") or ())
        except ConfigError as exc:
            print(f"rffbench: error: {exc}", file=sys.stderr)
            raise SystemExit(2)
        except Exception:  # anything else: the run reports it as usual
            pass
        self._check(config.hydra.run.dir, "hydra.run.dir")
        try:  # before Hydra writes .hydra/ and run.log into another live run's directory
            check_not_claimed(config.hydra.run.dir, "hydra.run.dir")
        except RunDirError as exc:
            print(f"rffbench: error: {exc}", file=sys.stderr)
            raise SystemExit(2)

    def on_multirun_start(self, config, **kwargs):
        self._freeze_sweep_dir(config)
        self._check_size(config)  # first: a refused sweep leaves no folder
        self._check(config.hydra.sweep.dir, "hydra.sweep.dir")

    @staticmethod
    def _freeze_sweep_dir(config):
        """A sweep folder named after the command (``${rffbench_sweep:}``) is resolved
        once, here, and given to every job: Hydra composes each job again with its own
        overrides, which would name another folder per job."""
        from omegaconf import OmegaConf, open_dict, read_write

        raw = str(OmegaConf.to_container(config.hydra.sweep, resolve=False).get("dir", ""))
        if "rffbench_sweep" not in raw:
            return
        d = str(config.hydra.sweep.dir)
        quote = "'" if "'" not in d else '"'
        with read_write(config.hydra), open_dict(config.hydra):
            config.hydra.sweep.dir = d
            if quote not in d:
                config.hydra.overrides.hydra.append(f"hydra.sweep.dir={quote}{d}{quote}")

    @staticmethod
    def _check_size(config):
        """One line and exit 2 for a sweep of no job (an empty range) or of more than
        MAX_SWEEP_JOBS, before Hydra lists its jobs (a billion of them filled the memory)."""
        import sys

        from omegaconf import OmegaConf

        from .store import MAX_SWEEP_JOBS, count_jobs

        if "BasicSweeper" not in str(OmegaConf.select(config, "hydra.sweeper._target_") or ""):
            return
        try:
            from hydra.core.override_parser.overrides_parser import OverridesParser

            params = OmegaConf.select(config, "hydra.sweeper.params") or {}
            args = [f"{k}={v}" for k, v in params.items()] + \
                [str(o) for o in (OmegaConf.select(config, "hydra.overrides.task") or [])]
            parsed = OverridesParser.create().parse_overrides(args)
        except Exception:  # Hydra's sweeper says what is wrong with them
            return
        n = count_jobs(parsed)
        swept = " ".join(str(o.input_line) for o in parsed if o.is_sweep_override())
        RffbenchCallback._announce(config, n)
        if n == 0:
            print(f"rffbench: error: the sweep has no job: a value list is empty ({swept})",
                  file=sys.stderr)
            raise SystemExit(2)
        if n > MAX_SWEEP_JOBS:
            print(f"rffbench: error: the sweep asks for {n:,} jobs ({swept}), more than one "
                  f"command runs ({MAX_SWEEP_JOBS:,}): split it into commands that share "
                  "hydra.sweep.dir (its runs are stored by identity)", file=sys.stderr)
            raise SystemExit(2)

    @staticmethod
    def _announce(config, n):
        """The sweep's first line: how many jobs and where they go; a preset that forces
        multirun (hydra.mode: MULTIRUN) started without -m says so, since its user may have
        meant one run."""
        import sys

        from omegaconf import OmegaConf

        where = OmegaConf.select(config, "hydra.sweep.dir")
        preset = OmegaConf.select(config, "experiment")
        asked = any(a in ("-m", "--multirun") for a in sys.argv[1:])
        line = f"rffbench: a sweep of {n:,} job{'s' if n != 1 else ''} into {where}"
        if not asked:
            line += (f" (experiment={preset} is a sweep: it sets hydra.mode=MULTIRUN; one run "
                     "of it: add hydra.mode=RUN)")
        print(line + "; Ctrl-C stops it, the same command resumes it", flush=True)

    def on_multirun_end(self, config, **kwargs):
        import sys

        from omegaconf import OmegaConf

        from .errors import RffbenchError, os_error_text
        from .report import make_report

        if not self.report:
            return
        sweep = config.hydra.sweep.dir
        try:
            rep = make_report(sweep, pdf=OmegaConf.select(config, "report.pdf", default=True))
        except RffbenchError as exc:
            print(f"rffbench report: error: {exc}", file=sys.stderr)
            raise SystemExit(1)
        except OSError as exc:
            print(f"rffbench report: error: {os_error_text(exc, 'cannot write the report')}",
                  file=sys.stderr)
            raise SystemExit(1)
        except Exception as exc:  # a bug in the report: the runs are recorded all the same
            import logging

            logging.getLogger("rffbench").debug("the report failed", exc_info=True)
            first = first_line(exc)
            print(f"rffbench report: error: the report of {sweep} failed ({type(exc).__name__}: "
                  f"{first}); the runs are recorded; please report this bug (`rffbench-report "
                  f"{sweep}` shows the traceback)", file=sys.stderr)
            raise SystemExit(1)
        print(f"rffbench report: {rep.index} ({rep.status_line})")
        if rep.latex:
            print(f"rffbench report: {len(rep.latex)} LaTeX tables in {rep.latex[0].parent}")
        for line in rep.problem_lines():
            print(f"rffbench: {line}", file=sys.stderr)
        if not rep.complete:
            raise SystemExit(1)
