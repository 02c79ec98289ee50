"""Memory checks: refuse a request that cannot fit before any work is done.

``require(nbytes, key, value, what)`` raises a one-line
:class:`~rffbench.errors.ConfigError` naming the config key when ``nbytes``
exceeds ``MEMORY_FRACTION`` of the memory currently available (MemAvailable
from /proc/meminfo; the check is skipped where that is unknown).
"""
from __future__ import annotations

import os

from .errors import ConfigError

#: at most this share of the available memory may be planned for one request
MEMORY_FRACTION = 0.8
GIB = float(1 << 30)


def available_bytes():
    """Bytes of memory available to a new allocation now, or None if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def require(nbytes, key, value, what):
    """Raise ConfigError if ``nbytes`` (for ``what``) cannot fit in memory."""
    avail = available_bytes()
    if avail is not None and nbytes > MEMORY_FRACTION * avail:
        raise ConfigError(f"{key}={value!r} is not allowed: {what} needs {nbytes / GIB:.3g} GiB, "
                          f"more than {MEMORY_FRACTION:.0%} of the {avail / GIB:.3g} GiB "
                          "available; use a smaller value")
