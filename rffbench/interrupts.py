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
import threading

_REQUESTED = threading.Event()


def install():
    """SIGINT raises KeyboardInterrupt (as Python's default handler) and is remembered
    (the command line's entry point installs it; in the main thread only)."""
    def handler(signum, frame):
        _REQUESTED.set()
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


def requested():
    """Has Ctrl-C arrived since :func:`install`?"""
    return _REQUESTED.is_set()


def checkpoint():
    """Raise KeyboardInterrupt if Ctrl-C arrived, even when the exception it raised was
    swallowed where it landed."""
    if _REQUESTED.is_set():
        raise KeyboardInterrupt
