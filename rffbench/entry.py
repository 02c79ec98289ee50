"""The first code of the installed commands and of ``python run.py``: what can go wrong
before a command's own code is even loaded, said in one line.

Loading the command (Hydra, numba, numpy, scikit-learn) takes a second or two; Ctrl-C
in that time raised KeyboardInterrupt inside some import and printed its traceback, and a
numba setting it refuses (``NUMBA_NUM_THREADS=0``) printed numba's.  Here Ctrl-C stops
with one line and exit 130, and the setting is named with what is allowed, exit 2.  This
module imports nothing heavy itself.
"""
from __future__ import annotations

import os
import sys


def environment_problem(environ=os.environ):
    """One line naming an environment variable that would stop numba or rffbench's compiled
    code from loading, or None.  numba reads NUMBA_NUM_THREADS when it is imported and
    refuses values below 1 (ValueError, "Number of threads specified must be > 0") and
    non-integers; rffbench reads RFFBENCH_BLAS (rffbench.blas_choice) and refuses a value
    it does not know, or oneMKL where it is not installed."""
    from .blas_choice import checked
    from .errors import RffbenchError

    try:
        checked(environ)
    except RffbenchError as exc:
        return str(exc)
    value = environ.get("NUMBA_NUM_THREADS")
    if value is None or not value.strip():
        return None
    try:
        ok = int(value) >= 1
    except ValueError:
        ok = False
    if ok:
        return None
    return (f"NUMBA_NUM_THREADS={value!r} is not allowed: use a whole number >= 1 (the "
            "threads numba and BLAS may use; the run's threads key picks fewer) or unset it")


def launch(prog, load):
    """Run the command ``load()`` returns (its ``main``), with the start-up's Ctrl-C and
    environment problems as one line each."""
    from . import interrupts

    interrupts.install()  # remembered even if an import swallows the KeyboardInterrupt
    try:
        problem = environment_problem()
        if problem:
            print(f"{prog}: error: {problem}", file=sys.stderr)
            sys.exit(2)
        main = load()
        interrupts.checkpoint()
    except KeyboardInterrupt:
        _interrupted_while_starting(prog)
    except Exception:
        # Ctrl-C landed in a library's clean-up, which raised its own error in place of
        # the KeyboardInterrupt (omegaconf's, while Hydra's import builds its configs)
        if interrupts.requested():
            _interrupted_while_starting(prog)
        raise
    return main()


def _interrupted_while_starting(prog):
    print(f"{prog}: interrupted while starting (nothing was run)", file=sys.stderr)
    sys.exit(130)


def _cli():
    from .cli import main

    return main


def _report():
    from .report import main

    return main


def rffbench():
    """The ``rffbench`` command (= ``python run.py``)."""
    return launch("rffbench", _cli)


def report():
    """The ``rffbench-report`` command (= ``python -m rffbench.report``)."""
    return launch("rffbench-report", _report)
