"""Checks of configuration values, shared by every config block (``rffbench.config``
and each measurement's own block): one wording, ``key=value is not allowed: what is``.
"""
from __future__ import annotations

import math

from .errors import ConfigError


def require(ok, key, value, allowed):
    """ConfigError ``key=value is not allowed: allowed`` unless ``ok``."""
    if not ok:
        raise ConfigError(f"{key}={value!r} is not allowed: {allowed}")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def positive_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def numbers(v, lo=0.0):
    """A non-empty list of finite numbers >= lo."""
    return isinstance(v, (list, tuple)) and len(v) >= 1 and all(
        isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a) and a >= lo
        for a in v)


def check_n_points(key, value):
    """A measurement's ``n_points``: null or an integer >= 2."""
    require(value is None or (is_int(value) and value >= 2), key, value,
            "use an integer >= 2 (at most the training-set size) or null")
