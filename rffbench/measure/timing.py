"""Map fit and transform time on the training set (median of warm repeats)."""
from __future__ import annotations

import logging
from dataclasses import dataclass

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
    """Map fit and transform time on the training set (median of warm repeats)."""

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
        return [
            record("timing", "map_fit_time_s", fit_med, "s", spread=fit_spread,
                   n_repeats=cfg.repeats, note="" if fit_med is not None else UNMEASURED),
            record("timing", "map_transform_time_s", tr_med, "s", spread=tr_spread,
                   n_repeats=cfg.repeats,
                   note=f"{X.shape[0]} rows" if tr_med is not None else UNMEASURED),
            _startup(ctx),
        ]
