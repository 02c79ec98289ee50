"""Timing one call: a warm-up, then the median and spread of warm repeats.

Kept apart from rffbench.measure so that a light process (a peer's worker,
rffbench.peers) can time with the same rule without loading numba and every map."""
from __future__ import annotations

import time

import numpy as np


def time_call(fn, repeats):
    """Call once to warm up (numba compile, JIT, caches, first-touch page faults), then
    time ``repeats`` calls.

    Returns (median, spread = max - min) in seconds; perf_counter around
    exactly the call.
    """
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), float(np.max(times) - np.min(times))
