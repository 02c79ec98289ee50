"""Ctrl-C that a library cannot swallow.

Python raises KeyboardInterrupt in whatever code runs when SIGINT arrives; when that code
is a finaliser (``__del__``, a weakref callback) or a library's ``except BaseException``,
the exception is printed as "ignored" or dropped and the program goes on: a sweep
interrupted at that moment would finish as if nothing had happened (seen once in
several runs on a loaded machine).  The command line's handler also sets a flag, and
:func:`checkpoint` (before each measurement, before a run's records are written, before
each job of a sweep) raises KeyboardInterrupt again when the flag is set.
"""
from __future__ import annotations

import signal
import sys
import threading

_REQUESTED = threading.Event()


def install():
    """SIGINT raises KeyboardInterrupt (as Python's default handler) and is remembered
    (the command line's entry point installs it; in the main thread only).  Where Python
    cannot raise it (a ctypes callback: numba's cache hook while it compiles; a
    finaliser), it printed "Exception ignored ..." and a traceback; a remembered one is
    now silent there, since :func:`checkpoint` raises it again."""
    def handler(signum, frame):
        _REQUESTED.set()
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)
    if not getattr(sys.unraisablehook, "_rffbench", False):
        default = sys.unraisablehook

        def unraisable(info):
            if isinstance(info.exc_value, KeyboardInterrupt) and _REQUESTED.is_set():
                return
            default(info)

        unraisable._rffbench = True
        sys.unraisablehook = unraisable


def requested():
    """Whether Ctrl-C arrived (an exception a library raised after it, its state half
    updated by the KeyboardInterrupt, is the interruption's, not a bug to print)."""
    return _REQUESTED.is_set()


def checkpoint():
    """Raise KeyboardInterrupt if Ctrl-C arrived, even when the exception it raised was
    swallowed where it landed."""
    if _REQUESTED.is_set():
        raise KeyboardInterrupt
