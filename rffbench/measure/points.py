"""The point set M a measurement works on: a seeded subsample of the training set.

``n_points`` is explicit (an error if larger than the training set, before any
work) or null (``DEFAULT_N_POINTS`` of the block, capped at the training-set
size, with a note saying so).
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError


def resolve_n_points(ctx, name, cfg):
    """(n, note) for ``measure.<name>.n_points``; ConfigError if impossible."""
    n_train = ctx.data.X_train.shape[0]
    n = cfg.n_points
    if n is None:
        n = min(cfg.DEFAULT_N_POINTS, n_train)
        return n, f"M = {n} training points (n_points=null: min({cfg.DEFAULT_N_POINTS}, n_train))"
    if n > n_train:
        raise ConfigError(f"measure.{name}.n_points={n} is not allowed: dataset={ctx.data.name} "
                          f"has {n_train} training points; use 2..{n_train} or null")
    return n, f"M = {n} training points"


def sample_points(ctx, name, n):
    """M: n training points, a subsample seeded by the run seed and ``name``."""
    X = ctx.data.X_train
    if n == X.shape[0]:
        return X
    idx = np.sort(ctx.rng(name).choice(X.shape[0], n, replace=False))
    return X[idx]
