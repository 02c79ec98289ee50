"""Map fit and transform time on the training set (median of warm repeats).

With ``device=cuda`` the transform runs on the GPU and ``map_transform_time_s`` is what a
caller of ``transform`` waits for (the rows copied to the device, the features computed
and copied back); the parts are recorded apart: ``map_device_time_s`` (CUDA events around
the work on the device, the rows already there and the features left there),
``h2d_time_s`` and ``d2h_time_s`` (the two copies, host clock) and
``device_first_call_s`` (the first call: the kernels' compilation, never in a timed
repeat)."""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..checks import MAX_REPEATS, Int, check_constraints
from ..clock import UNMEASURED, time_call
from ..memory import Need
from ..results import record
from .base import Measurement

log = logging.getLogger(__name__)


@dataclass
class TimingConfig:
    """measure.timing: map fit and transform time on the training set."""

    enabled: bool = True
    #: warm repeats; the median and the spread (max - min) are recorded
    repeats: int = 3

    constraints = {"repeats": Int(3, MAX_REPEATS)}

    def __post_init__(self):
        check_constraints(self, "measure.timing")


def _startup(ctx):
    return record("timing", "startup_time_s", ctx.startup_s, "s",
                  note="wall time from the interpreter's start to the first measurement "
                       "(imports, config, data, numba cache load)" if ctx.startup_s is not None
                  else "not the first run of this process (in-process multirun), or the "
                       "process start time is unknown on this system")


class Timing(Measurement):
    """Map fit and transform time on the training set (median of warm repeats; with
    device=cuda the GPU transform's parts too: module docs)."""

    name = "timing"
    Config = TimingConfig

    def needs(self, ctx, cfg):
        """The map and the features of the whole training set (transform is not chunked
        for the caller: it returns n_train x D)."""
        if ctx.data.streamed:
            return []
        key, total, n_train_of = ctx.rows_key()
        d, it = ctx.data.d, ctx.itemsize

        def nbytes(v):
            n = n_train_of(v[key])
            return ctx.map_cls.memory_bytes(n, d, v["D"], it, train_rows=n, **ctx.map_params)

        return [Need("the timing measurement (the n_train x D features of the training set)",
                     nbytes, {"D": (ctx.cfg.D, 1), key: (total, 4)})]

    def run(self, ctx, cfg):
        if ctx.data.streamed:
            why = ("not measured: the data is streamed from dataset.path, so the features of the "
                   "whole training set are never held at once; learning's map_time_s is the "
                   "transform time, chunk by chunk")
            return [record("timing", "map_fit_time_s", None, "s", note=why),
                    record("timing", "map_transform_time_s", None, "s", note=why), _startup(ctx)]
        X = ctx.data.X_train
        fmap = ctx.make_map()
        log.info("timing: %s fit/transform on %d x %d, %d repeats", fmap.name, *X.shape,
                 cfg.repeats)
        fit_med, fit_spread = time_call(lambda: fmap.fit(X), cfg.repeats)
        tr_med, tr_spread = time_call(lambda: fmap.transform(X), cfg.repeats)
        extra = _device_rows(fmap, X, cfg.repeats) if ctx.device == "cuda" else []
        return extra + [
            record("timing", "map_fit_time_s", fit_med, "s", spread=fit_spread,
                   n_repeats=cfg.repeats, note="" if fit_med is not None else UNMEASURED),
            record("timing", "map_transform_time_s", tr_med, "s", spread=tr_spread,
                   n_repeats=cfg.repeats,
                   note=f"{X.shape[0]} rows" if tr_med is not None else UNMEASURED),
            _startup(ctx),
        ]


def _device_rows(fmap, X, repeats):
    """The GPU transform's parts (module docs): CUDA events around the device's work, the
    copies by the host's clock, the first call apart."""
    from ..cuda import device_code as ck
    from ..cuda import maps as cmaps
    from ..cuda.timing import device_times, synchronize

    Xc = np.ascontiguousarray(X)
    dX = ck.to_device(Xc)
    first, dev_med, dev_spread = device_times(lambda: cmaps.transform(fmap, Xc, dX), repeats)
    h2d, h2d_spread = time_call(lambda: (ck.to_device(Xc), synchronize()), repeats)
    out = cmaps.transform(fmap, Xc, dX)
    synchronize()
    d2h, d2h_spread = time_call(lambda: ck.to_host(out), repeats)
    rows = f"{X.shape[0]} rows"
    return [
        record("timing", "map_device_time_s", dev_med, "s", spread=dev_spread,
               n_repeats=repeats, note=f"{rows}: CUDA events around the work on the device "
                                       "(rows there already, features left there)"
               if dev_med is not None else "not measured: numba's CUDA simulator has no "
                                           "device clock"),
        record("timing", "h2d_time_s", h2d, "s", spread=h2d_spread, n_repeats=repeats,
               note=f"{rows} copied to the device ({Xc.nbytes / 1e6:.3g} MB)"),
        record("timing", "d2h_time_s", d2h, "s", spread=d2h_spread, n_repeats=repeats,
               note=f"the features copied to the host ({out.nbytes / 1e6:.3g} MB)"),
        record("timing", "device_first_call_s", first, "s",
               note="the first call on the device: its kernels' compilation (or load) and "
                    "all; no other time contains it"),
    ]
