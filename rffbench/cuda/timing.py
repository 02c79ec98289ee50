"""Time on the device: CUDA events around a call, the first call (the kernels'
compilation, the first transfer) timed apart by the host's clock.  What the host's clock
times (a copy, a CPU call) goes through rffbench.clock.time_call."""
from __future__ import annotations

import time

import numpy as np


def synchronize():
    """Wait for the device's queued work."""
    from numba import cuda

    cuda.synchronize()


def device_times(fn, repeats):
    """(the first call's seconds, compilation and all; the median and the spread (max - min)
    of ``repeats`` further calls, each timed by CUDA events recorded before and after it on
    the default stream): the warm calls' work on the device, what they leave there
    included, nothing of the host's clock.  On numba's CUDA simulator, which has no device
    clock (its events' elapsed time is a constant), the median and spread are None."""
    from numba import cuda

    from . import simulated

    t = time.perf_counter()
    fn()
    synchronize()
    first = time.perf_counter() - t
    if simulated():
        for _ in range(repeats):
            fn()
        return first, None, None
    times = []
    for _ in range(repeats):
        e0, e1 = cuda.event(), cuda.event()
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) / 1e3)
    return first, float(np.median(times)), float(np.max(times) - np.min(times))

