"""The point set M a measurement works on: a seeded subsample of the training set, or
(``rows="test_first"``, the approximation measurement's option) the first test rows in
the data's order.

``n_points`` is explicit (an error if larger than the rows it is taken from, before any
work) or null (``DEFAULT_N_POINTS`` of the block, capped at that size, with a note
saying so).  Also what every measurement draws from the run seed the same way: a seeded
subsample's indices (:func:`sample_index`) and the seeds of its redraws of the map
(:func:`redraw_seeds`).
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError


def resolve_n_points(ctx, name, cfg):
    """(n, note) for ``measure.<name>.n_points``; ConfigError if impossible."""
    test = getattr(cfg, "rows", "train") == "test_first"
    part, what = ("X_test", "test") if test else ("X_train", "training")
    n_have = getattr(ctx.data, part).shape[0]
    n = cfg.n_points
    first = "the first " if test else ""
    if n is None:
        n = min(cfg.DEFAULT_N_POINTS, n_have)
        if n < 2:  # no pair of points: nothing to compare (and no halves to cross)
            where = ("dataset.test_size (or rows=train)" if test else "the data's rows")
            raise ConfigError(f"measure.{name}.n_points=null is not allowed here: "
                              f"dataset={ctx.data.name} has {n_have} {what} point"
                              f"{'' if n_have == 1 else 's'} and the measurement needs at "
                              f"least 2; raise {where}")
        return n, (f"M = {first}{n} {what} points (n_points=null: min({cfg.DEFAULT_N_POINTS}, "
                   f"n_{'test' if test else 'train'}))")
    if n > n_have:
        raise ConfigError(f"measure.{name}.n_points={n} is not allowed: dataset={ctx.data.name} "
                          f"has {n_have} {what} points; use 2..{n_have} or null")
    return n, f"M = {first}{n} {what} points"


def sample_index(ctx, name, n, have):
    """The sorted indices of n of ``have`` rows, a subsample seeded by the run seed and
    ``name`` (all of them, in order, when n == have)."""
    if n == have:
        return np.arange(have)
    return np.sort(ctx.rng(name).choice(have, n, replace=False))


def sample_points(ctx, name, n):
    """M: n training points, a subsample seeded by the run seed and ``name``."""
    X = ctx.data.X_train
    return X if n == X.shape[0] else X[sample_index(ctx, name, n, X.shape[0])]


def redraw_seeds(seed, redraws, salt):
    """The run seed, then redraws - 1 seeds spawned from it and a measurement's ``salt``
    (independent maps, a measurement's own)."""
    return [seed] + list(np.random.SeedSequence([seed, salt]).spawn(redraws - 1))
