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
from omegaconf import OmegaConf

from . import config as _config  # noqa: F401  (registers the structured config schema)
from . import interrupts
from .errors import first_line


def _help_text():
    from .cli_help import help_text

    return help_text()


# conf/config.yaml's hydra.help.template: ${rffbench_help:}, the text of --help
OmegaConf.register_new_resolver("rffbench_help", _help_text, replace=True)


class _Deferred:
    """A text computed when it is formatted (string.Template formats only the
    placeholders its template names)."""

    def __init__(self, make):
        self.make = make

    def __str__(self):
        return self.make()


def _config_groups_when_named():
    """Hydra's --help lists every option of every config group for its template's
    $APP_CONFIG_GROUPS and $HYDRA_CONFIG_GROUPS, whether the template names them or
    not: 134 groups, each a fresh config repository (~5 s of a 10 s ``--help`` here).
    rffbench's template (${rffbench_help:}) names neither: the listing is made only where
    a template formats it (``--hydra-help``'s does)."""
    from hydra._internal.hydra import Hydra

    listing = Hydra.format_config_groups
    if getattr(listing, "deferred", False):
        return

    def deferred(self, predicate, compact=True):
        return _Deferred(lambda: listing(self, predicate, compact))

    deferred.deferred = True
    Hydra.format_config_groups = deferred

# a log file on a full disk must not print "--- Logging error ---" tracebacks
logging.raiseExceptions = False


#: conf/ inside the package (a file path: the package has no __init__ there)
CONF_DIR = Path(__file__).resolve().parent / "conf"

#: characters a sweep folder's name keeps from its command (others become _)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=,._+-")
#: the longest part of a sweep folder's name taken from its command
SWEEP_NAME_MAX = 60


def sweep_name(overrides):
    """The default folder name of an ad-hoc sweep (conf/config.yaml, hydra.sweep.dir): its
    overrides, sorted (their order does not matter) and joined, cut at SWEEP_NAME_MAX
    characters, and a hash of them all: the same command finds its folder again (and
    resumes there), another command gets its own.  Runs are computed once for every
    sweep of the folder anyway (rffbench.store)."""
    import hashlib

    items = sorted(str(o) for o in (overrides or []))
    text = "_".join(items) or "default"
    text = "".join(c if c in _NAME_CHARS else "_" for c in text)
    digest = hashlib.sha1("\n".join(items).encode()).hexdigest()[:8]
    return f"{text[:SWEEP_NAME_MAX].rstrip('_.')}-{digest}"


def _sweep_name_of(*, _root_):
    """``${rffbench_sweep:}``: the sweep's name from the command's overrides
    (``hydra.overrides.task``).  The multirun's value is given to its jobs by the callback
    (rffbench.launch.RffbenchCallback freezes hydra.sweep.dir), since Hydra composes
    each job again with the job's own overrides."""
    try:
        return sweep_name(_root_.hydra.overrides.task)
    except Exception:  # no hydra node (a config composed from Python): no command
        return sweep_name([])


def _register_resolvers():
    from omegaconf import OmegaConf

    OmegaConf.register_new_resolver("rffbench_sweep", _sweep_name_of, replace=True)


_register_resolvers()


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
    code = run_main(cfg, hc.runtime.output_dir, overrides=list(hc.overrides.task))
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
            first = first_line(exc)
            print(f"rffbench: error: a job process of the sweep died ({type(exc).__name__}: "
                  f"{first}); the runs already recorded are kept: run the same command again "
                  "to compute the others", file=sys.stderr)
            raise SystemExit(1) from None  # not an Exception: Hydra prints nothing more

    wrapped._rffbench = True
    Hydra.multirun = wrapped


def _group_options(group):
    """The options of config group ``group`` (Hydra's config loader, once Hydra is up), or
    []."""
    try:
        from hydra.core.global_hydra import GlobalHydra

        return sorted(GlobalHydra.instance().config_loader().get_group_options(group))
    except Exception:
        return []


def _option_line(group, value, options):
    """``group=value is not allowed: use one of ...`` with the closest option."""
    from .checks import closest

    near = closest(value, options) if isinstance(value, str) else None
    allowed = f"use one of {', '.join(options)}" if options else "use the name of an option"
    return (f"{group}={value} is not allowed: {allowed}"
            + (f" (did you mean {group}={near}?)" if near else ""))


def _group_override_of_wrong_type(argv):
    """(group, value) of the first override in ``argv`` that selects a config group with a
    value that is not a name (``kernel=1``, ``experiment=null``), or None."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for arg in argv:
        if arg.startswith("-"):
            continue
        try:
            o = parser.parse_override(arg)
        except Exception:
            continue
        if o.is_sweep_override() or not _group_options(o.key_or_group):
            continue
        v = o.value()
        if not isinstance(v, str):
            return o.key_or_group, o.get_value_element_as_str() if v is not None else "null"
    return None


def hydra_error_line(exc, argv=()):
    """One line for Hydra's errors about the command line (a malformed override, a value of
    the wrong type, a key or a group option that does not exist, a flag that needs another),
    or None for the others."""
    from hydra.errors import (
        ConfigCompositionException,
        HydraException,
        MissingConfigException,
        OverrideParseException,
    )
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

    from .config import unknown_key_line

    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file:
        group, _, value = str(exc.missing_cfg_file).rpartition("/")
        return _option_line(group, value, list(exc.options or []) or _group_options(group))
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
            first = first_line(cause)
            return f"{what} is not allowed: {first}"
    if isinstance(exc, ValueError) and "Config group override must be" in str(exc):
        found = _group_override_of_wrong_type(argv)
        if found:
            group, value = found
            return _option_line(group, value, _group_options(group))
    if isinstance(exc, HydraException) or (isinstance(exc, ValueError) and _raised_by_hydra(exc)):
        return lines[0] if lines else type(exc).__name__  # e.g. "package 'x' not found"
    return None


def _raised_by_hydra(exc):
    """Whether ``exc`` was raised inside Hydra's own code (its checks of the command line:
    --resolve without --cfg, two commands at once), not by rffbench's."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return bool(last) and f"{__import__('os').sep}hydra{__import__('os').sep}" in last


#: the free-form blocks of a map's and a kernel's own parameters: a key in them is added
#: as it is given (Hydra would want ``+features.params.NAME``, or ``++`` when a preset set it)
FREE_FORM = ("features.params.", "kernel.params.")


#: Hydra's flags without a value, which its parser refuses after the first override
#: (``python run.py D=64,128 -m`` printed Hydra's 12-line usage): moved to the front
LEADING_FLAGS = ("-m", "--multirun", "--resolve")


def free_form_overrides(argv):
    """``argv`` with ``features.params.NAME=v`` (and kernel's) written ``++...``: Hydra
    refuses a key that the config does not hold yet unless it is prefixed; the params block
    exists to take such keys, and the class checks their names.  The flags of
    LEADING_FLAGS come first, wherever they were typed."""
    flags = [a for a in argv if a in LEADING_FLAGS]
    rest = [a for a in argv if a not in LEADING_FLAGS]
    return flags + [f"++{a}" if a.startswith(FREE_FORM) and "=" in a else a for a in rest]


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
                if interrupts.requested():  # a library's own error after Ctrl-C landed in it
                    raise KeyboardInterrupt from None
                line = None if os.environ.get("HYDRA_FULL_ERROR") == "1" else \
                    hydra_error_line(exc, sys.argv[1:])
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
    import os

    check_cwd("rffbench")
    interrupts.install()  # Ctrl-C is remembered: a swallowed KeyboardInterrupt still stops
    _dead_job_is_one_line()
    _hydra_errors_are_one_line()
    _config_groups_when_named()
    sys.argv[1:] = free_form_overrides(sys.argv[1:])
    try:
        _main()
    except Exception as exc:  # Hydra's errors outside its run_and_report (--help, flags)
        if interrupts.requested():  # a library's own error after Ctrl-C landed in it
            _interrupted(KeyboardInterrupt())
        line = None if os.environ.get("HYDRA_FULL_ERROR") == "1" else \
            hydra_error_line(exc, sys.argv[1:])
        if line is None:
            raise
        print(f"rffbench: error: {line}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt as exc:
        _interrupted(exc)


def _interrupted(exc):
    """Ctrl-C: one line (a run's own Interrupted has said it) and exit 130."""
    from .experiment import Interrupted

    if not isinstance(exc, Interrupted):  # outside a run: say it here
        print("rffbench: interrupted (a sweep resumes when the same command runs again)",
              file=sys.stderr)
    sys.exit(130)


if __name__ == "__main__":
    main()
