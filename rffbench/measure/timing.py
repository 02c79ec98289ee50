"""Map fit and transform time on the training set (median of warm repeats)."""
from __future__ import annotations

import logging
import time

import numpy as np

from ..results import record

log = logging.getLogger(__name__)


def time_call(fn, repeats):
    """Call once to warm up (numba compile, caches), then time ``repeats`` calls.

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


def measure(ctx, cfg):
    X = ctx.data.X_train
    fmap = ctx.make_map()
    log.info("timing: %s fit/transform on %d x %d, %d repeats", fmap.name, *X.shape, cfg.repeats)
    fit_med, fit_spread = time_call(lambda: fmap.fit(X), cfg.repeats)
    tr_med, tr_spread = time_call(lambda: fmap.transform(X), cfg.repeats)
    return [
        record("timing", "map_fit_time_s", fit_med, "s", spread=fit_spread, n_repeats=cfg.repeats),
        record("timing", "map_transform_time_s", tr_med, "s", spread=tr_spread,
               n_repeats=cfg.repeats, note=f"{X.shape[0]} rows"),
        record("timing", "startup_time_s", ctx.startup_s, "s",
               note="wall time from the interpreter's start to the first measurement (imports, "
                    "config, data, numba cache load)" if ctx.startup_s is not None else
                    "not the first run of this process (in-process multirun), or the process "
                    "start time is unknown on this system"),
    ]
