"""Timing in fresh worker processes, the practice of pyperf and asv.

Why: one process's times depend on the state it finds the machine in, not only on the
code.  Measured on a 2-core virtual machine: the same transform took 0.07-0.16 s in
seven processes and 0.75-1.41 s in four, because a fresh 400-800 MB output is made of
transparent huge pages that the kernel zeroes on first touch, and on a VM whose balloon
reports free 2 MiB blocks to the host (free page reporting) a block that sat free for a
second is zeroed again at ~5.5 ms instead of ~0.1 ms (docs/performance.md, "Timing on a
virtual machine").  So a cell (the implementations of one comparison) is timed in
``processes`` fresh interpreters, one after the other (never two at once: they would
share the cores), each with its own warm-ups and ``repeats`` interleaved calls
(:func:`interleaved_times`: every call's output is released before the next call
starts).  Each process's median is kept; the cell's value is the median of those
medians, its spread their range, and a cell whose per-process medians differ by more
than ``unstable_ratio`` (max / min) is *unstable*: its records, figure and summary say
so (:class:`CellTimes`).

The parent writes the cell's builder (a module-level function, by name) and its
arguments with :mod:`pickle` into a private temporary directory (mode 0700, created and
removed by this call) and runs ``python -m rffbench.measure TASK``; the worker
sets its thread counts, builds the implementations (``build(**kwargs)``: name ->
zero-argument callable), times them and prints one JSON line.  Nothing else reads the
file.
"""
from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median as _median

from ..clock import machine_state, machine_text

#: seconds one worker may take (its imports, warm-ups and repeats)
WORKER_TIMEOUT_S = 1800
#: per-process medians further apart than this (max / min) mark a cell unstable
UNSTABLE_RATIO = 1.3


def interleaved_times(impls, repeats, warmups=1):
    """{name: [seconds of each call]} of ``impls`` (name -> fn), A B C A B C ..., after
    ``warmups`` calls of each (numba compile or cache load, first-touch faults).  Each
    call's result is released as soon as it returns, so no output of one call is alive
    while another runs (the next call's fresh output can reuse its memory); each call is
    timed with numba's compiler idle (rffbench.clock: a call during which numba compiled
    is timed again)."""
    from ..clock import UNMEASURED, clean_call
    from ..errors import RffbenchError

    for fn in impls.values():
        for _ in range(warmups):
            fn()  # the result is dropped here
    times = {k: [] for k in impls}
    for _ in range(repeats):
        for name, fn in impls.items():
            t = clean_call(fn, what=name)[1]  # the result is dropped with the tuple
            if t.seconds is None:
                raise RffbenchError(f"{name}: {UNMEASURED}")
            times[name].append(t.seconds)
    return times


@dataclass
class CellTimes:
    """The times of one cell's implementations over its worker processes."""

    #: name -> one list of call times per process
    runs: dict
    unstable_ratio: float = UNSTABLE_RATIO
    #: the 1-minute load at the start of each process
    loads: list = field(default_factory=list)
    machine: str = ""

    @property
    def processes(self):
        return len(next(iter(self.runs.values()))) if self.runs else 0

    def medians(self, name):
        """Each process's median of ``name``."""
        return [_median(t) for t in self.runs[name]]

    def median(self, name):
        """The median of the per-process medians."""
        return _median(self.medians(name))

    def spread(self, name):
        """The range of the per-process medians (one process: the range of its calls)."""
        if self.processes == 1:
            t = self.runs[name][0]
            return max(t) - min(t)
        m = self.medians(name)
        return max(m) - min(m)

    def ratio(self, name):
        """max / min of the per-process medians (1 for one process)."""
        m = self.medians(name)
        return max(m) / min(m) if min(m) > 0 else math.inf

    def unstable(self, name):
        return self.processes > 1 and self.ratio(name) > self.unstable_ratio

    def per_process(self, fn):
        """The median over processes of ``fn(medians)``, ``fn`` given one process's
        {name: median}: a ratio taken within each process (a time over its limit,
        measured under one load), then summarised."""
        vals = [fn({k: _median(runs[p]) for k, runs in self.runs.items()})
                for p in range(self.processes)]
        return _median(vals)

    def note(self, name):
        """The words a record of ``name`` carries: processes, their medians, stability."""
        n = self.processes
        if n == 1:
            return "1 worker process"
        meds = ", ".join(f"{m:.3g}" for m in self.medians(name))
        text = f"median of {n} worker processes' medians ({meds} s)"
        if self.unstable(name):
            text = (f"UNSTABLE: {text} differ by {self.ratio(name):.2f}x (> "
                    f"{self.unstable_ratio:g}x): the machine, not the code, decided them")
        return text

    def loads_text(self):
        return ", ".join(self.loads) if self.loads else "unknown"


def time_in_processes(build, kwargs, repeats, processes=3, threads=None,
                      unstable_ratio=UNSTABLE_RATIO, warmups=1):
    """:class:`CellTimes` of the implementations ``build(**kwargs)`` returns (name ->
    zero-argument callable), each of ``processes`` fresh worker processes timing them by
    :func:`interleaved_times`.  ``build`` is a module-level function (found by name in
    the worker); ``threads``: numba's and the BLAS's threads in the worker (default: this
    process's numba threads).  RffbenchError (one line) when a worker fails."""
    import numba

    from ..errors import RffbenchError, first_line

    threads = threads or numba.get_num_threads()
    module = build.__module__
    if module == "__main__":  # python -m rffbench.bench: the worker imports it by its name
        module = sys.modules["__main__"].__spec__.name
    task = dict(build=f"{module}:{build.__qualname__}", kwargs=kwargs,
                repeats=int(repeats), threads=int(threads), warmups=int(warmups))
    runs, loads = {}, []
    with tempfile.TemporaryDirectory(prefix="rffbench-timing-") as tmp:  # mode 0700
        path = Path(tmp) / "task.pkl"
        with open(path, "wb") as fh:
            pickle.dump(task, fh, protocol=pickle.HIGHEST_PROTOCOL)
        # the worker imports what this process can (a plug-in map's module, a builder's)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
        for _ in range(processes):
            try:
                proc = subprocess.run([sys.executable, "-m", "rffbench.measure", str(path)],
                                      capture_output=True, text=True, env=env,
                                      timeout=WORKER_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise RffbenchError(f"{task['build']}: a timing worker took more than "
                                    f"{WORKER_TIMEOUT_S} s") from None
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            res = json.loads(lines[-1]) if lines else {}
            if proc.returncode != 0 or "times" not in res:
                tail = res.get("error") or first_line(
                    (proc.stderr.strip().splitlines() or ["no output"])[-1])
                raise RffbenchError(f"{task['build']}: a timing worker failed (exit "
                                    f"{proc.returncode}): {tail}")
            for name, t in res["times"].items():
                runs.setdefault(name, []).append(t)
            loads.append(res.get("load", "unknown"))
    return CellTimes(runs, unstable_ratio, loads, machine_text())


def worker(path):
    """The worker's side: a dict with ``times`` (name -> call times) and ``load``, or
    ``error`` (an RffbenchError's line)."""
    import importlib

    import numba
    from threadpoolctl import threadpool_limits

    from ..errors import RffbenchError

    with open(path, "rb") as fh:
        task = pickle.load(fh)
    load = machine_state()["load"]
    numba.set_num_threads(min(task["threads"], numba.config.NUMBA_NUM_THREADS))
    module, name = task["build"].split(":")
    build = importlib.import_module(module)
    for part in name.split("."):
        build = getattr(build, part)
    with threadpool_limits(limits=task["threads"]):
        try:
            impls = build(**task["kwargs"])
            times = interleaved_times(impls, task["repeats"], task["warmups"])
        except RffbenchError as exc:
            return dict(error=str(exc).splitlines()[0])
    return dict(times=times, load=load)
