"""The memory plan of a run: refuse a request that cannot fit, before any work.

Every allocation that grows with n, d or D is a :class:`Need`: what it is, a
function of the config values it depends on, and those keys (current value,
smallest allowed value).  A :class:`Plan` holds the needs that live all run
long (``base``) and one list per phase (a measurement, the median
lengthscale, ...): its peak is the base plus the largest phase.  When the
peak exceeds ``MEMORY_FRACTION`` of the memory available now, :meth:`Plan.check`
raises one :class:`~rffbench.errors.ConfigError` naming the key to change and
the largest value that fits (found by bisection on the plan itself), e.g.::

    D=1000000000 is not allowed: the timing measurement (the n_train x D features of
    the training set) needs 10.1 TiB at its peak, more than 80% of the 19.3 GiB
    available; D <= 1918217 fits

The same plan runs before the data is loaded (the data itself: synthetic
``dataset.n`` x ``dataset.d``, or a file's size) and after (every measurement).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .errors import ConfigError

#: at most this share of the available memory may be planned for one run
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


def cores():
    """The cores this process may use: SLURM_CPUS_PER_TASK or NUMBA_NUM_THREADS when set,
    else its CPU affinity."""
    for var in ("SLURM_CPUS_PER_TASK", "NUMBA_NUM_THREADS"):
        v = os.environ.get(var)
        if v and v.isdigit() and int(v) > 0:
            return int(v)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def human(nbytes):
    """1536 -> '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(nbytes) < 1024 or unit == "EiB":
            return f"{nbytes:.3g} {unit}"
        nbytes /= 1024.0
    return f"{nbytes:.3g} EiB"


@dataclass
class Need:
    """One allocation: ``nbytes(values)`` for a dict of config values; ``keys`` maps each
    config key it depends on to (current value, smallest allowed value)."""

    what: str
    nbytes: object
    keys: dict = field(default_factory=dict)

    def at(self, values):
        return float(self.nbytes(values))


@dataclass
class Plan:
    base: list = field(default_factory=list)
    phases: dict = field(default_factory=dict)  # name -> list of Need
    #: plan key -> (the key the user set, its value, its value -> the plan key's value,
    #: its smallest value): e.g. the output dimension D from D_n, or from D frequencies
    units: dict = field(default_factory=dict)
    #: the keys the user set (not at their defaults): a refusal names one of them first,
    #: since the user changed it (measure.bounds.pairs=10^9 was refused naming trials)
    user_set: set = field(default_factory=set)

    def set_by_user(self, keys):
        """Refusals name a key among ``keys`` (dotted, as the user wrote them) first."""
        self.user_set = set(keys)
        return self

    def in_user_units(self, key, user_key, user_value, to_plan, lo=1):
        """Refusals about ``key`` name ``user_key`` and its values instead (the key the
        user set, in the user's unit), ``to_plan`` converting them."""
        self.units[key] = (user_key, user_value, to_plan, lo)
        return self

    def add(self, phase, needs):
        """Needs of one phase (None: the base, live all run long)."""
        if phase is None:
            self.base.extend(needs)
        else:
            self.phases.setdefault(phase, []).extend(needs)
        return self

    def values(self):
        vals = {}
        for n in self._all():
            for k, (cur, _) in n.keys.items():
                vals.setdefault(k, cur)
        return vals

    def _all(self):
        return self.base + [n for ns in self.phases.values() for n in ns]

    def peak(self, values=None):
        """(bytes at the peak, the phase of the peak) for config ``values``."""
        values = self.values() if values is None else values
        base = sum(n.at(values) for n in self.base)
        best, which = 0.0, None
        for name, needs in self.phases.items():
            b = sum(n.at(values) for n in needs)
            if b > best:
                best, which = b, name
        return base + best, which

    def check(self, avail=None):
        """ConfigError naming the key to change when the peak does not fit."""
        avail = available_bytes() if avail is None else avail
        if avail is None:
            return
        budget = MEMORY_FRACTION * avail
        values = self.values()
        total, phase = self.peak(values)
        if total <= budget:
            return
        live = self.base + (self.phases[phase] if phase else [])
        culprit = max(live, key=lambda n: n.at(values))
        keys = list(dict.fromkeys(list(culprit.keys) + [k for n in live for k in n.keys]))
        where = f"{culprit.what} needs {human(total)} at its peak"

        def user(key):  # (the key the user set, its value, -> plan value, its smallest)
            lo = next(n.keys[key][1] for n in self._all() if key in n.keys)
            return self.units.get(key, (key, values[key], lambda v: v, lo))

        def floor(key):  # the peak with this key at its smallest: the key that matters most
            name, cur, to_plan, lo = user(key)
            return self.peak(dict(values, **{key: to_plan(lo)}))[0]

        # the keys the user set first, then the others; within each, the one whose
        # smallest value frees the most
        for key in sorted(keys, key=lambda k: (user(k)[0] not in self.user_set, floor(k))):
            name, cur, to_plan, lo = user(key)
            fit = self._largest(key, lo, cur, values, budget, to_plan)
            if fit is not None:
                raise ConfigError(f"{name}={cur!r} is not allowed: {where}, more than "
                                  f"{MEMORY_FRACTION:.0%} of the {human(avail)} available; "
                                  f"{name} <= {fit} fits")
        key = min(keys, key=lambda k: (user(k)[0] not in self.user_set, floor(k))) \
            if keys else None
        raise ConfigError((f"{user(key)[0]}={user(key)[1]!r} is not allowed: " if key else "")
                          + f"{where}, more than {MEMORY_FRACTION:.0%} of the {human(avail)} "
                          "available" + (", and no single smaller value fits" if key else "")
                          + "; use a smaller problem")

    def _largest(self, key, lo, cur, values, budget, to_plan=lambda v: v):
        """Largest integer v in [lo, cur) with the peak at ``to_plan(v)`` (the plan's own
        value of ``key``) within budget, or None."""
        def fits(v):
            return self.peak(dict(values, **{key: to_plan(v)}))[0] <= budget

        if not isinstance(cur, int) or cur <= lo or not fits(lo):
            return None
        a, b = lo, cur  # fits(a), not fits(b)
        while b - a > 1:
            m = (a + b) // 2
            a, b = (m, b) if fits(m) else (a, m)
        return a


def require(nbytes, key, value, what):
    """Raise ConfigError if ``nbytes`` (for ``what``) cannot fit: a single allocation
    outside a run's plan (e.g. a map fitted from Python)."""
    avail = available_bytes()
    if avail is not None and nbytes > MEMORY_FRACTION * avail:
        raise ConfigError(f"{key}={value!r} is not allowed: {what} needs {human(nbytes)}, more "
                          f"than {MEMORY_FRACTION:.0%} of the {human(avail)} available; use a "
                          "smaller value")
