"""Timing in worker processes, the practice of pyperf and asv.

Why: one process's times depend on the state it finds the machine in, not only on the
code.  Measured on a 2-core virtual machine: the same transform took 0.07-0.16 s in
seven processes and 0.75-1.41 s in four, because a fresh 400-800 MB output is made of
transparent huge pages that the kernel zeroes on first touch, and on a VM whose balloon
reports free 2 MiB blocks to the host (free page reporting) a block that sat free for a
second is zeroed again at ~5.5 ms instead of ~0.1 ms (docs/performance.md, "Timing on a
virtual machine").  So a cell (the implementations of one comparison) is timed in
``processes`` worker processes, one after the other (never two at once: they would
share the cores), each with its own warm-ups and ``repeats`` interleaved calls
(:func:`interleaved_times`: every call's output is released before the next call
starts).  Each process's median is kept; the cell's value is the median of those
medians, its spread their range, and a cell whose per-process medians differ by more
than ``unstable_ratio`` (max / min) is *unstable*: its records, figure and summary say
so (:class:`CellTimes`).

The workers are a pool started once per command (:class:`WorkerPool`): the first cell
starts ``processes`` interpreters (``python -m rffbench.measure --serve``) and every later
cell of the command, of any run of a sweep, is timed in the same ones, each cell in
every worker in turn.  A worker pays its imports and numba's cache loads once, not once
per cell (~4 s each on 2 cores; in the speed preset the timed calls themselves are
80-90% of a cell's time), and the cells' order in each worker is on the record
(:attr:`CellTimes.cell`): a drift across a sweep shows as a trend over it.

The parent writes the cell's builder (a module-level function, by name) and its
arguments with :mod:`pickle` into a private temporary directory (mode 0700, created and
removed by this call) and sends its path to each worker on a line of its stdin; the
worker sets its thread counts, builds the implementations (``build(**kwargs)``: name ->
zero-argument callable), times them, drops them and prints one JSON line.  Nothing else
reads the file.
"""
from __future__ import annotations

import atexit
import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median as _median

from ..blas_choice import ENV
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
    #: the 1-minute load at the start of the cell in each process
    loads: list = field(default_factory=list)
    machine: str = ""
    #: the worker processes' ids, and how many cells each had timed before this one (its
    #: place in the command's order: 0 for the first cell)
    pids: list = field(default_factory=list)
    cell: int = 0
    #: the BLAS each process timed with (rffbench.clock.blas_info there: vendor, version,
    #: kernel architecture, threads)
    blas: list = field(default_factory=list)

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
        order = f"; cell {self.cell + 1} of the command in each worker" if self.pids else ""
        if n == 1:
            return "1 worker process" + order
        meds = ", ".join(f"{m:.3g}" for m in self.medians(name))
        text = f"median of {n} worker processes' medians ({meds} s){order}"
        if self.unstable(name):
            text = (f"UNSTABLE: {text} differ by {self.ratio(name):.2f}x (> "
                    f"{self.unstable_ratio:g}x): the machine, not the code, decided them")
        return text

    def loads_text(self):
        return ", ".join(self.loads) if self.loads else "unknown"

    def blas_text(self):
        """The processes' BLAS (one text where they agree, as they do unless a library
        changed between them)."""
        return " | ".join(dict.fromkeys(self.blas)) or None


class _Worker:
    """One long-lived timing worker: ``python -m rffbench.measure --serve``, a task's path
    per line on its stdin, one JSON line per task on its stdout."""

    def __init__(self, env):
        self.errors = tempfile.TemporaryFile()  # bytes: offsets are positions
        self.proc = subprocess.Popen([sys.executable, "-m", "rffbench.measure", "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errors, text=True, env=env, bufsize=1)
        self.cells = 0
        self.said = 0  # how much of its stderr was passed on
        self.timed_out = False  # its last task took longer than it was given

    def alive(self):
        return self.proc.poll() is None

    def run(self, path, timeout):
        """The worker's answer to the task at ``path`` (a dict), or None when it died, or
        took longer than ``timeout`` s (it is then killed, and :attr:`timed_out` set)."""
        answer = []

        def read():
            try:
                self.proc.stdin.write(f"{path}\n")
                self.proc.stdin.flush()
                for line in self.proc.stdout:
                    if line.startswith("{"):
                        answer.append(json.loads(line))
                        return
            except (OSError, ValueError):
                return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if not answer:
            self.timed_out = reader.is_alive()
            if self.timed_out:  # still at work on the task: nothing to wait for
                self.proc.kill()
                self.proc.wait()
            self.pass_on()
            self.stop()
            return None
        self.pass_on()
        self.cells += 1
        return answer[0]

    def pass_on(self):
        """What the worker printed on stderr since the last task, printed on this process's
        stderr (warnings, a library's complaints: nothing a worker says is hidden)."""
        self.errors.seek(self.said)
        data = self.errors.read()
        self.said += len(data)
        if data:
            sys.stderr.write(data.decode(errors="replace"))

    def last_error(self):
        from ..errors import first_line

        self.errors.seek(0)
        lines = self.errors.read().decode(errors="replace").strip().splitlines()
        return first_line(lines[-1]) if lines else "no output"

    def stop(self):
        if self.alive():
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class WorkerPool:
    """The command's timing workers (module docs), started when a cell first asks for
    them, kept for every later cell with the same import path and BLAS, stopped at exit.  A worker
    that died or timed out is replaced by a fresh one at the next cell."""

    def __init__(self):
        self.workers = []
        self.key = None  # (import path, BLAS) of the live workers
        self.lock = threading.Lock()
        atexit.register(self.close)

    def take(self, n, import_path, blas=None):
        """``n`` live workers whose imports see ``import_path`` and whose products run on
        ``blas`` (rffbench.blas_choice; None: this process's environment's choice)."""
        env = dict(os.environ, PYTHONPATH=import_path)
        if blas is not None:
            env[ENV] = blas
        key = (import_path, env.get(ENV, ""))
        if key != self.key:  # another plug-in folder on the path, another BLAS: new workers
            self.close()
            self.key = key
        self.workers = [w for w in self.workers if w.alive()]
        while len(self.workers) < n:
            self.workers.append(_Worker(env))
        return self.workers[:n]

    def close(self):
        for w in self.workers:
            w.stop()
        self.workers = []


def unsendable(obj):
    """None when ``obj`` pickles (a worker process can be given it), else why not, in a
    few words (a class made inside a function is not importable by name)."""
    from ..errors import first_line

    try:
        pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        return f"{type(exc).__name__}: {first_line(exc)}"
    return None


#: the command's pool (tests start one of their own: WorkerPool())
POOL = WorkerPool()


def time_in_processes(build, kwargs, repeats, processes=3, threads=None,
                      unstable_ratio=UNSTABLE_RATIO, warmups=1, pool=None, blas=None):
    """:class:`CellTimes` of the implementations ``build(**kwargs)`` returns (name ->
    zero-argument callable), timed by :func:`interleaved_times` in each of ``processes``
    worker processes of ``pool`` (default the command's :data:`POOL`), one after the
    other.  ``build`` is a module-level function (found by name in the worker);
    ``threads``: numba's and the BLAS's threads in the worker (default: this process's
    numba threads); ``blas``: the BLAS of the workers' products (rffbench.blas_choice;
    None: this process's environment's).  RffbenchError (one line) when a worker fails."""
    import numba

    from ..errors import RffbenchError, first_line

    pool = POOL if pool is None else pool
    threads = threads or numba.get_num_threads()
    module = build.__module__
    if module == "__main__":  # python -m rffbench.bench: the worker imports it by its name
        module = sys.modules["__main__"].__spec__.name
    task = dict(build=f"{module}:{build.__qualname__}", kwargs=kwargs,
                repeats=int(repeats), threads=int(threads), warmups=int(warmups))
    runs, loads, seen = {}, [], []
    # the workers import what this process can (a plug-in map's module, a builder's)
    import_path = os.pathsep.join(p or os.getcwd() for p in sys.path)
    with pool.lock, tempfile.TemporaryDirectory(prefix="rffbench-timing-") as tmp:  # 0700
        path = Path(tmp) / "task.pkl"
        with open(path, "wb") as fh:
            try:
                pickle.dump(task, fh, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # a check before the work names the key: a backstop
                raise RffbenchError(f"{task['build']}: its inputs cannot be sent to a timing "
                                    f"worker process ({type(exc).__name__}: "
                                    f"{first_line(exc)})") from None
        workers = pool.take(processes, import_path, blas)
        cell = min(w.cells for w in workers)
        for w in workers:
            res = w.run(path, WORKER_TIMEOUT_S)
            if res is None:
                why = (f"took more than {WORKER_TIMEOUT_S} s" if w.timed_out
                       else f"failed (exit {w.proc.returncode}): {w.last_error()}")
                raise RffbenchError(f"{task['build']}: a timing worker {why}")
            if "times" not in res:
                raise RffbenchError(f"{task['build']}: a timing worker failed: "
                                    f"{res.get('error', 'no answer')}")
            for name, t in res["times"].items():
                runs.setdefault(name, []).append(t)
            loads.append(res.get("load", "unknown"))
            seen.append(res.get("blas", "unknown"))
        pids = [w.proc.pid for w in workers]
    return CellTimes(runs, unstable_ratio, loads, machine_text(), pids, cell, seen)


def worker(path):
    """The worker's side of one task: a dict with ``times`` (name -> call times), ``load``
    and ``blas`` (the BLAS it timed with, its threads as limited), or ``error`` (an
    RffbenchError's line, or the exception that stopped the cell); the implementations are
    dropped before it returns."""
    import gc
    import importlib

    import numba
    from threadpoolctl import threadpool_limits

    from ..clock import blas_info
    from ..errors import RffbenchError, first_line

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
            blas = blas_info()  # after the calls: every library they load, as limited
        except RffbenchError as exc:
            return dict(error=str(exc).splitlines()[0])
        except Exception as exc:  # a serving worker goes on with the next cell
            return dict(error=f"{type(exc).__name__}: {first_line(exc)}")
        finally:
            impls = None
            gc.collect()
    return dict(times=times, load=load, blas=blas)


def serve(lines=sys.stdin, out=sys.stdout):
    """The serving worker's loop: a task's path per line in, :func:`worker`'s answer as one
    JSON line out, until its input closes."""
    for line in lines:
        if line.strip():
            out.write(json.dumps(worker(line.strip())) + "\n")
            out.flush()
