"""The ``rffbench`` command (also ``python run.py`` in a checkout).

``rffbench [overrides]`` runs one configuration, ``rffbench -m key=a,b ...`` a
sweep; ``rffbench --help`` lists the registries and the main keys.  The config
is composed by Hydra from the ``conf/`` shipped inside the package (in a
checkout, ``rffbench/conf`` is the top-level ``conf/``); the work is done by
:func:`rffbench.experiment.main`.  A single run writes its records into the
Hydra run directory; in a multirun each run's records go to
``SWEEP/runs/<run_id>/`` (:mod:`rffbench.store`): a failing job does not stop
the sweep (its ``error.txt``), runs already recorded are skipped (resume), and
the callback (:class:`rffbench.launch.RffbenchCallback`) checks the output
directory before Hydra writes into it and reports the sweep at the end.
Ctrl-C stops with one line (exit 130); the interrupted run is resumable.
Output directories are relative to the working directory, as for any Hydra app.
"""
import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode

from . import config as _config  # noqa: F401  (registers the structured config schema)

# a log file on a full disk must not print "--- Logging error ---" tracebacks
logging.raiseExceptions = False


#: conf/ inside the package (a file path: the package has no __init__ there)
CONF_DIR = Path(__file__).resolve().parent / "conf"


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def _main(cfg):
    from .experiment import main as run_main
    from .launch import log_job, threads_per_job

    hc = HydraConfig.get()
    if hc.mode == RunMode.MULTIRUN:
        log_job(hc.sweep.dir, hc.job.num, hc.launcher)
        return run_main(cfg, hc.runtime.output_dir, sweep_dir=hc.sweep.dir,
                        jobs_threads=threads_per_job(hc.launcher),
                        overrides=list(hc.overrides.task))
    code = run_main(cfg, hc.runtime.output_dir)
    if code:
        sys.exit(code)
    return code


#: what parallel launchers raise when a job's process dies (SIGKILL, out of memory):
#: joblib/loky, concurrent.futures, submitit
_DEAD_JOB_ERRORS = ("TerminatedWorkerError", "BrokenProcessPool", "FailedJobError",
                    "UncompletedJobError")


def _dead_job_is_one_line():
    """A sweep whose job process dies under a parallel launcher: one line (the launcher's
    exception would reach Hydra's error printing as a traceback), exit 1.  The runs already
    recorded are kept and the same command resumes (the dead job's claim is taken over)."""
    from hydra._internal.hydra import Hydra

    if getattr(Hydra.multirun, "_rffbench", False):
        return
    multirun = Hydra.multirun

    def wrapped(self, *args, **kwargs):
        try:
            return multirun(self, *args, **kwargs)
        except Exception as exc:
            names = {c.__name__ for c in type(exc).__mro__}
            if not names & set(_DEAD_JOB_ERRORS):
                raise
            first = (str(exc).strip().splitlines() or [""])[0]
            print(f"rffbench: error: a job process of the sweep died ({type(exc).__name__}: "
                  f"{first}); the runs already recorded are kept: run the same command again "
                  "to compute the others", file=sys.stderr)
            raise SystemExit(1) from None  # not an Exception: Hydra prints nothing more

    wrapped._rffbench = True
    Hydra.multirun = wrapped


def hydra_error_line(exc):
    """One line for Hydra's errors about the command line (a malformed override, a value of
    the wrong type, a key or a group option that does not exist), or None for the others."""
    from hydra.errors import (ConfigCompositionException, MissingConfigException,
                              OverrideParseException)
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

    from .config import closest, unknown_key_line

    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    if isinstance(exc, MissingConfigException) and exc.options and exc.missing_cfg_file:
        group, _, value = str(exc.missing_cfg_file).rpartition("/")
        near = closest(value, exc.options)
        return (f"{group}={value} is not allowed: use one of {', '.join(exc.options)}"
                + (f" (did you mean {group}={near}?)" if near else ""))
    if isinstance(exc, OverrideParseException):
        what = lines[0].replace("Error parsing override ", "") if lines else "?"
        return (f"cannot read the override {what}: {lines[1] if len(lines) > 1 else ''} "
                "(write key=value, e.g. D=256; a sweep: -m D=64,256)")
    if isinstance(exc, ConfigCompositionException):
        cause = exc.__cause__
        if isinstance(cause, (ConfigKeyError, ConfigAttributeError)) and \
                getattr(cause, "full_key", None):
            return unknown_key_line(cause.full_key)
        if isinstance(cause, OmegaConfBaseException):
            what = lines[0].replace("Error merging override ", "") if lines else "?"
            first = (str(cause).strip().splitlines() or [""])[0]
            return f"{what} is not allowed: {first}"
    return None


def _hydra_errors_are_one_line():
    """Hydra's errors about the command line as one line and exit 2 (Hydra prints 5 to 18
    lines, its config search path among them, and exits 1); HYDRA_FULL_ERROR=1 keeps
    Hydra's own."""
    import os

    from hydra._internal import utils

    if getattr(utils.run_and_report, "_rffbench", False):
        return
    original = utils.run_and_report

    def wrapped(func):
        def guarded():
            try:
                return func()
            except Exception as exc:
                line = None if os.environ.get("HYDRA_FULL_ERROR") == "1" else \
                    hydra_error_line(exc)
                if line is None:
                    raise
                print(f"rffbench: error: {line}", file=sys.stderr)
                raise SystemExit(2) from None  # not an Exception: Hydra prints nothing more
        return original(guarded)

    wrapped._rffbench = True
    utils.run_and_report = wrapped


def check_cwd(prog):
    """Exit 2 with one line when the working directory is gone (deleted under the shell):
    output directories are relative to it."""
    import os

    try:
        os.getcwd()
    except OSError as exc:
        print(f"{prog}: error: the working directory is gone ({exc.strerror}: deleted?); cd "
              "to an existing directory and run the command again", file=sys.stderr)
        sys.exit(2)


def main():
    """Console entry point: Hydra's command line, Ctrl-C as one line and exit 130."""
    check_cwd("rffbench")
    _dead_job_is_one_line()
    _hydra_errors_are_one_line()
    try:
        _main()
    except KeyboardInterrupt as exc:
        from .experiment import Interrupted

        if not isinstance(exc, Interrupted):  # outside a run: say it here
            print("rffbench: interrupted (a sweep resumes when the same command runs again)",
                  file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
