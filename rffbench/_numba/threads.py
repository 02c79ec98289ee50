"""Chunks of one compiled, GIL-free function run on Python threads: the parallel loop of the
products and Grams that are compiled per kernel.

A ``prange`` loop is a function of its own, compiled (and cached) once for every kernel
code and dtype it calls: the per-kernel parallel wrappers were a fifth of a cold compile of
the test-suite, for loops of three lines.  Here the chunk function (``nogil=True``, its
kernel codes literal) is compiled once per kernel and dtype, as it was, and the loop over
its chunks is plain Python (:func:`map_chunks`): :func:`parallel_chunks` hands the chunks out to
``numba.get_num_threads()`` threads (the caller's among them), each taking the next chunk
as it finishes one.  Which thread makes a chunk never changes its bits: every chunk writes
rows (or a part) of its own.

:func:`entry` finds the compiled version for a call's argument types once and keeps its
entry point: calling the dispatcher with a literal code from Python would go through
numba's ``literally`` retry (~10 ms) on every call.
"""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import types

_ENTRIES: dict = {}
_LOCK = threading.Lock()
_POOL: list = [None, None]  # [pid, executor]: a forked child makes its own


def _fingerprint(v):
    """What numba's type of ``v`` depends on, cheaply (a dict key)."""
    if isinstance(v, np.ndarray):
        f = v.flags
        return (v.dtype.str, v.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    return type(v)


def entry(disp, args, literal=()):
    """The entry point of ``disp``'s version for ``args`` (the positions in ``literal`` typed as
    their literal values), compiled or loaded from the cache on the first call only.  The
    entry point does not check its arguments' types: call it with ``args`` of the same types
    (chunks of one call)."""
    key = (disp, *(args[i] if i in literal else _fingerprint(v) for i, v in enumerate(args)))
    ep = _ENTRIES.get(key)
    if ep is None:
        with _LOCK:
            ep = _ENTRIES.get(key)
            if ep is None:
                sig = tuple(types.literal(v) if i in literal else numba.typeof(v)
                            for i, v in enumerate(args))
                ep = _ENTRIES[key] = disp.compile(sig)
    return ep


def _pool():
    """This process's threads (NUMBA_NUM_THREADS of them at most: the most any caller asks)."""
    if _POOL[0] != os.getpid():
        _POOL[:] = [os.getpid(), ThreadPoolExecutor(max_workers=numba.config.NUMBA_NUM_THREADS,
                                                    thread_name_prefix="rffbench-chunks")]
    return _POOL[1]


def map_chunks(disp, n, args_of, literal=()):
    """``disp(*args_of(c))`` for every chunk ``c`` in ``range(n)``, in parallel
    (:func:`parallel_chunks`), through the entry point of ``disp``'s version for the types of
    ``args_of(0)`` (:func:`entry`: every chunk's arguments have the same types)."""
    if n <= 0:
        return
    ep = entry(disp, args_of(0), literal)
    parallel_chunks(n, lambda c: ep(*args_of(c)))


def parallel_chunks(n, body):
    """``body(c)`` for every chunk ``c`` in ``range(n)``, on ``numba.get_num_threads()``
    threads at most (this one among them), the next free thread taking the next chunk.
    ``body`` calls a ``nogil`` compiled function.  The first error (or Ctrl-C in this
    thread) is raised once every running chunk has finished; no chunk starts after it."""
    k = min(n, numba.get_num_threads())
    if k <= 1:
        for c in range(n):
            body(c)
        return
    chunks = itertools.count()
    stop = []

    def work():
        try:
            while not stop:
                c = next(chunks)
                if c >= n:
                    return
                body(c)
        except BaseException:
            stop.append(True)
            raise

    helpers = [_pool().submit(work) for _ in range(k - 1)]
    try:
        work()
    finally:
        stop.append(True)
        errors = [f.exception() for f in helpers]  # waits for each
    for e in errors:
        if e is not None:
            raise e


def row_chunks(n, m, threads):
    """Bounds (length chunks + 1) of contiguous ranges of ``n`` rows of ``m`` values each:
    one range where the whole is small (under 2^14 values: a thread's start costs more),
    else one per thread, or four per thread (a thread that finishes early takes another)
    where each still holds 2^18 values or more (~0.2 ms: the cost of handing a chunk out
    stays a few percent)."""
    work = n * max(m, 1)
    if work < 2**14 or threads <= 1:
        chunks = 1
    elif work >= 4 * threads * 2**18:
        chunks = 4 * threads
    else:
        chunks = threads
    return np.linspace(0, n, min(max(n, 1), chunks) + 1).round().astype(np.int64)
