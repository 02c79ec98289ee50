"""Timing one call: a warm-up, then the median and spread of warm repeats.

Kept apart from rffbench.measure so that a light process (a peer's worker,
rffbench.peers) can time with the same rule without loading numba and every map."""
from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager

import numpy as np

#: True while a call is being timed (its warm-up is not): checks that cost time, such
#: as rffbench.plugins' check of a plug-in map's output, skip those calls
TIMED = contextvars.ContextVar("rffbench_timed", default=False)


@contextmanager
def timed():
    token = TIMED.set(True)
    try:
        yield
    finally:
        TIMED.reset(token)


def time_call(fn, repeats):
    """Call once to warm up (numba compile, JIT, caches, first-touch page faults), then
    time ``repeats`` calls.

    Returns (median, spread = max - min) in seconds; perf_counter around
    exactly the call.
    """
    fn()
    times = []
    with timed():
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return float(np.median(times)), float(np.max(times) - np.min(times))
