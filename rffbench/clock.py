"""Timing that times the work and nothing else.

numba compiles a function the first time it is called with new argument types, or loads
the compiled code from its cache; either can take seconds (12.7 s for the exact KRR's
prediction kernel on a fresh install).  A timing that contains it measures the compiler,
not the work.  This module watches numba's compiler through numba's event API
(``numba.core.event``: every compilation and every cache load holds numba's compiler
lock, which broadcasts ``numba:compiler_lock``) and times a call as an *attempt*: an
attempt during which numba's compiler ran (in this process, or in a backend's worker
processes through ``probes``) is thrown away and the call timed again.  Compilation is
reported on its own (:func:`numba_totals`; the ``timing`` records of a run).

Kept apart from rffbench.measure so that a light process (a peer's worker,
rffbench.peers) can time with the same rule without loading numba and every map: the
watch is installed only once numba is imported, and an attempt during which numba was
first imported counts as disturbed.
"""
from __future__ import annotations

import contextvars
import os
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: True while a call is being timed (its warm-up is not): checks that cost time, such
#: as rffbench.plugins' check of a plug-in map's output, skip those calls
TIMED = contextvars.ContextVar("rffbench_timed", default=False)

#: attempts at timing one call before it is given up (each but the last disturbed by numba)
ATTEMPTS = 3
#: the note of a time that could not be measured (numba compiled during every attempt)
UNMEASURED = (f"not measured: numba compiled or loaded code during each of {ATTEMPTS} "
              "attempts at timing the call")


@contextmanager
def timed():
    token = TIMED.set(True)
    try:
        yield
    finally:
        TIMED.reset(token)


# --------------------------------------------------------------------------
# numba's compiler, watched
# --------------------------------------------------------------------------
class _Watch:
    """Process-wide counts of numba's compiler: ``events`` = outermost acquisitions of its
    compiler lock (a compilation or a cache load each), ``compiles`` = compilations,
    ``seconds`` inside the lock, the names of the functions compiled last."""

    def __init__(self):
        self.lock = threading.Lock()
        self.local = threading.local()
        self.events = 0
        self.compiles = 0
        self.seconds = 0.0
        self.names = deque(maxlen=64)
        self.installed = False

    def install(self):
        """Listen to numba's events, once numba is imported (False: not imported yet)."""
        if self.installed:
            return True
        if "numba" not in sys.modules:
            return False
        with self.lock:
            if self.installed:
                return True
            from numba.core import event

            watch = self

            class LockListener(event.Listener):
                def on_start(self, ev):
                    loc = watch.local
                    depth = getattr(loc, "depth", 0)
                    loc.depth = depth + 1
                    if depth == 0:
                        loc.t0 = time.perf_counter()
                        with watch.lock:
                            watch.events += 1

                def on_end(self, ev):
                    loc = watch.local
                    loc.depth = max(getattr(loc, "depth", 1) - 1, 0)
                    if loc.depth == 0:
                        dt = time.perf_counter() - getattr(loc, "t0", time.perf_counter())
                        with watch.lock:
                            watch.seconds += dt

            class CompileListener(event.Listener):
                def on_start(self, ev):
                    disp = (ev.data or {}).get("dispatcher")
                    fn = getattr(disp, "py_func", None)
                    name = getattr(fn, "__name__", None) or str(disp)
                    with watch.lock:
                        watch.compiles += 1
                        watch.names.append(name)

                def on_end(self, ev):
                    pass

            event.register("numba:compiler_lock", LockListener())
            event.register("numba:compile", CompileListener())
            self.installed = True
        return True


_WATCH = _Watch()


def watch_numba():
    """Start watching numba's compiler in this process (a no-op until numba is imported;
    called by every timed attempt, and by a backend's workers before their tasks)."""
    return _WATCH.install()


def numba_events():
    """Compilations and cache loads of numba code in this process so far (0 before numba
    is imported)."""
    _WATCH.install()
    return _WATCH.events


def numba_totals():
    """dict(events, compiles, seconds): numba's compiler in this process so far
    (compilations and cache loads, compilations, seconds inside numba's compiler lock)."""
    _WATCH.install()
    with _WATCH.lock:
        return dict(events=_WATCH.events, compiles=_WATCH.compiles, seconds=_WATCH.seconds)


#: the last timed attempts of this process: dict(what, t0, t1, events, kept = its time is
#: used, i.e. numba's compiler was idle); the tests set numba's own event log against it
LOG = deque(maxlen=100000)


@dataclass
class Attempt:
    """One timed call: its seconds and what numba did meanwhile."""

    seconds: float
    events: int  # compilations and cache loads during the call (this process and probes)
    compile_s: float  # seconds in numba's compiler during the call (this process)
    compiled: list = field(default_factory=list)  # names of the functions compiled

    @property
    def disturbed(self):
        return self.events > 0


def _probe_state(probes):
    """Each probe's counts: {process: compilations so far} (an int: one process)."""
    return [p() for p in probes]


def _probe_new(before, after):
    """Compilations between two probe states, per process: a process that appeared
    meanwhile (a restarted worker) counts all of its own."""
    new = 0
    for b, a in zip(before, after):
        b = b if isinstance(b, dict) else {None: b}
        a = a if isinstance(a, dict) else {None: a}
        new += sum(max(0, int(v) - int(b.get(k, 0))) for k, v in a.items())
    return new


def attempt(fn, probes=(), what=""):
    """``(fn(), Attempt)``: one call timed with ``time.perf_counter`` around exactly the
    call, numba's compiler watched in this process and through ``probes`` (callables
    returning the compilation counts of other processes, {process: count}, e.g. a Dask
    cluster's workers)."""
    had_numba = _WATCH.install()
    with _WATCH.lock:
        e0, s0, c0 = _WATCH.events, _WATCH.seconds, _WATCH.compiles
    p0 = _probe_state(probes)
    token = TIMED.set(True)
    try:
        t0 = time.perf_counter()
        result = fn()
        t1 = time.perf_counter()
    finally:
        TIMED.reset(token)
    p1 = _probe_state(probes)
    if not had_numba and _WATCH.install():  # numba imported inside the call: not watched
        e_extra = 1
    else:
        e_extra = 0
    with _WATCH.lock:
        events = _WATCH.events - e0 + e_extra + _probe_new(p0, p1)
        compile_s = _WATCH.seconds - s0
        n_new = _WATCH.compiles - c0
        names = list(_WATCH.names)[-n_new:] if n_new else []
    # kept: its time is used (callers use an attempt's time only when it is undisturbed)
    LOG.append(dict(what=what, t0=t0, t1=t1, events=events, kept=events == 0))
    return result, Attempt(t1 - t0, events, compile_s, names)


@dataclass
class Timing:
    """The kept attempt of a call (``seconds`` None: every attempt was disturbed) and the
    attempts thrown away because numba compiled during them."""

    seconds: float | None
    discarded: list = field(default_factory=list)  # Attempts

    def note(self):
        """'' or a phrase for a record's note: what was timed again and why."""
        if not self.discarded:
            return ""
        names = sorted({n for a in self.discarded for n in a.compiled})
        what = f" ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" if names else ""
        lost = sum(a.seconds for a in self.discarded)
        if self.seconds is None:
            return (f"not measured: numba compiled or loaded code{what} during each of "
                    f"{len(self.discarded)} attempts ({lost:.3g} s)")
        return (f"timed again: numba compiled or loaded code{what} during "
                f"{len(self.discarded)} earlier attempt(s), {lost:.3g} s, not counted")


def clean_call(fn, probes=(), attempts=ATTEMPTS, what=""):
    """``(result, Timing)``: ``fn()`` timed by :func:`attempt` until an attempt runs with
    numba's compiler idle (at most ``attempts`` calls); the result is the kept attempt's
    (or the last one's)."""
    discarded = []
    for _ in range(attempts):
        result, a = attempt(fn, probes, what)
        if not a.disturbed:
            return result, Timing(a.seconds, discarded)
        discarded.append(a)
    return result, Timing(None, discarded)


def time_call(fn, repeats, probes=()):
    """Call once to warm up (numba compile, JIT, caches, first-touch page faults), then
    time ``repeats`` calls, each with numba's compiler idle (:func:`clean_call`).

    Returns (median, spread = max - min) in seconds; perf_counter around
    exactly the call.  (None, None) when numba compiled during every attempt of a call
    (:data:`UNMEASURED` says so in a record).
    """
    fn()
    times = []
    for _ in range(repeats):
        _, t = clean_call(fn, probes)
        if t.seconds is None:
            return None, None
        times.append(t.seconds)
    return float(np.median(times)), float(np.max(times) - np.min(times))


# --------------------------------------------------------------------------
# what the machine is doing
# --------------------------------------------------------------------------
def machine_state():
    """What decides a timing on this machine besides the code, where it can be read
    (Linux): the transparent-huge-page setting, whether a virtio balloon reports free
    pages to the host (a virtual machine with free page reporting) and the 1-minute load.
    A dict of text values (``unknown`` where it cannot be read)."""
    out = dict(thp="unknown", free_page_reporting="unknown", load="unknown")
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
        out["thp"] = text[text.index("[") + 1:text.index("]")]
    except (OSError, ValueError):
        pass
    try:
        balloons = [d for d in Path("/sys/bus/virtio/devices").iterdir()
                    if (d / "device").read_text().strip() == "0x0005"]
        if balloons:  # feature bit 5: VIRTIO_BALLOON_F_REPORTING
            bits = (balloons[0] / "features").read_text().strip()
            out["free_page_reporting"] = "on" if len(bits) > 5 and bits[5] == "1" else "off"
        else:
            out["free_page_reporting"] = "no balloon"
    except (OSError, ValueError):
        pass
    try:
        out["load"] = f"{os.getloadavg()[0]:.2f}"
    except OSError:
        pass
    return out


def machine_text(state=None):
    """:func:`machine_state` as a record's text, e.g. ``thp=madvise;free_page_reporting=on``
    (the load is per cell: :attr:`CellTimes.loads`)."""
    s = machine_state() if state is None else state
    return f"thp={s['thp']};free_page_reporting={s['free_page_reporting']}"


def blas_info():
    """The BLAS libraries loaded (numpy's at least: this module imports it), their version,
    kernel architecture and threads now, e.g. ``openblas 0.3.30 SkylakeX 2 threads
    (numpy)``: what a timing row names as the BLAS that ran it.  A process whose products
    run on another BLAS than the default (rffbench.blas_choice) says so first, e.g.
    ``RFFBENCH_BLAS=mkl: mkl 2026.2 2 threads (libmkl_rt.so.3); openblas ...``."""
    from threadpoolctl import threadpool_info

    from .blas_choice import ENV, requested
    from .errors import RffbenchError

    parts = []
    for lib in threadpool_info():
        if lib.get("user_api") != "blas":
            continue
        owner = "scipy" if "scipy.libs" in lib.get("filepath", "") else \
            "numpy" if "numpy" in lib.get("filepath", "") else os.path.basename(lib["filepath"])
        parts.append(f"{lib.get('internal_api')} {lib.get('version')} "
                     f"{lib.get('architecture') or ''} {lib.get('num_threads')} threads "
                     f"({owner})".replace("  ", " "))
    text = "; ".join(sorted(set(parts))) or "unknown"
    try:
        choice = requested()
    except RffbenchError:
        choice = "invalid"
    return text if choice == "default" else f"{ENV}={choice}: {text}"
